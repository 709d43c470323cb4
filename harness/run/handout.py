"""How ``--jobs`` hands a phase's tasks to its processes (:meth:`harness.run.parallel.Jobs.run`).

In task order, a phase ended with its largest task running alone while the other process
waited: the everyday text's modules of the standard library came last (3 s of a default
run), and each pool's long generated inputs are its last tasks. And every process starts
its own worker for each adapter a long input runs on (0.3 to 0.7 s each), so an
encoding's long units spread over two processes started each worker twice. So:

- the heaviest tasks are handed out first (``weights``);
- the tasks of one ``affinity`` key go to one process together, in their order, when
  there are at least as many keys as processes (the user's path has one encoding: its
  long units grouped would run in one process while the other waited);
- results come back in task order, whatever the hand-out order was: a run merges them
  in that order, so its report does not depend on which process finished first.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Iterator, Sequence

__all__ = ["chunked", "generated_weight", "handout"]


def handout(submit: Callable[[list[Any]], Future], tasks: Sequence[Any], *, weights: Sequence[int] | None = None,
            affinity: Sequence[Any] | None = None, processes: int) -> Iterator[Any]:
    """Each task's result, in task order. ``submit(group)`` runs a list of tasks in one
    process (of ``processes``) and returns the future of their results, in order.

    >>> def submit(group):
    ...     handed.append(group)
    ...     done = Future()
    ...     done.set_result([f"ran {task}" for task in group])
    ...     return done
    >>> handed = []
    >>> list(handout(submit, "abcd", weights=[1, 5, 1, 3], affinity=[0, 1, 0, 2], processes=2))
    ['ran a', 'ran b', 'ran c', 'ran d']
    >>> handed
    [['b'], ['d'], ['a', 'c']]
    >>> handed = []
    >>> _ = list(handout(submit, "abcd", weights=[1, 5, 1, 3], affinity=[0, 1, 0, 1], processes=3))
    >>> handed  # fewer keys than processes: each task alone
    [['b'], ['d'], ['a'], ['c']]
    """
    if affinity is None or len(set(affinity)) < processes:
        affinity = range(len(tasks))
    groups: dict[Any, list[int]] = {}
    for n, key in enumerate(affinity):
        groups.setdefault(key, []).append(n)
    members = list(groups.values())
    weight = [sum(weights[n] for n in group) if weights else 0 for group in members]
    place = {n: (g, i) for g, group in enumerate(members) for i, n in enumerate(group)}
    futures: list[Future | None] = [None] * len(members)
    try:
        for g in sorted(range(len(members)), key=lambda g: -weight[g]):  # stable: unweighed, in order
            futures[g] = submit([tasks[n] for n in members[g]])
        for n in range(len(tasks)):
            g, i = place[n]
            results = futures[g].result()  # type: ignore[union-attr]
            if i == len(members[g]) - 1:
                futures[g] = None  # yielded: not held while the rest run (a corpus's tasks)
            yield results[i]
    finally:
        for future in futures:  # left early (an error, Ctrl-C): what has not started never will
            if future is not None:
                future.cancel()


def generated_weight(task: Sequence[Any]) -> int:
    """A task of generated inputs' (:data:`~harness.run.parallel.GeneratedUnit`) weight:
    characters times adapters, each input counted as at least 64 characters (a short one
    still costs every check).

    >>> generated_weight([("abc", ("a", "b"), "r", False), ("x" * 100, ("a",), "r", False)])
    228
    """
    return sum(max(len(text), 64) * len(adapters) for text, adapters, *_ in task)


def chunked(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    """``items`` in consecutive slices of ``size``.

    >>> chunked([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    return [items[i:i + size] for i in range(0, len(items), size)]
