"""Which adapters a run uses, and which one is the reference of each encoding.

- Without ``--impl`` every registered adapter is in the run (except other environments'
  adapters, :mod:`harness.envs`, which join by name), plus any adapter a case
  names exactly (``gpt2-encoder:{here}/data/...``), so documented counterexamples on
  special fixtures reproduce. With ``--impl`` only the named ones, plus the references
  they are compared with. ``--encoding`` keeps only adapters of those encodings.
- An adapter that cannot be built is *unavailable* (its cells say so, with the reason);
  a provider whose entry point failed to import becomes an unavailable ``kind:*`` row.
  In a default run neither stops the run; but an adapter the user **asked for** (``--impl``,
  ``--plugin``) that cannot run is a :class:`SelectionError` (exit 2) naming its reason:
  a run that silently tested nothing of what was asked would pass.
- An adapter that claims no encoding cannot be compared with anything: an error too.
  So is an encoding with a pinned reference (``tiktoken:<encoding>``) that cannot run
  while nothing else of that encoding can serve, unless ``--reference`` names one.
- The reference of an encoding is ``--reference ENC=NAME`` if given, else
  ``tiktoken:<encoding>`` (GPT-2's ID space is named ``r50k_base``, so its reference is
  ``tiktoken:r50k_base``), else the adapter the cases most often name as ``reference``
  for that encoding, else the first available adapter of that encoding by sorted name. A case may name its own reference (``reference:``) for its adapters of that
  reference's encoding.
- With an :class:`~harness.worker.setup.Isolation` (the CLI and the pytest plugin pass
  one), the adapters it isolates are built and called in worker processes
  (:class:`~harness.worker.client.WorkerExecutor`); the rest in this process. Without
  one (the library default), everything runs in process.
"""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable, Mapping

from harness.calls import Calls, InProcess
from harness.encodings import is_on_request, reference_of
from harness.provenance import Provenance
from harness.registry import AdapterSpec, AdapterUnavailable, Registry, RegistryError, library_version
from harness.run.result import AdapterRow
from harness.worker.setup import Isolation

__all__ = ["Selected", "SelectionError", "parse_references", "select"]


class SelectionError(Exception):
    """A usage error in choosing adapters (unknown name, bad reference): exit 2."""


def parse_references(values: Iterable[str]) -> dict[str, str]:
    """``["cl100k_base=hf:cl100k_base"]`` -> ``{"cl100k_base": "hf:cl100k_base"}``.

    >>> parse_references(["r50k_base=tiktoken:gpt2"])
    {'r50k_base': 'tiktoken:gpt2'}
    """
    out: dict[str, str] = {}
    for value in values:
        encoding, sep, name = value.partition("=")
        if not sep or not encoding or not name:
            raise SelectionError(f"--reference {value!r} must look like ENCODING=ADAPTER, e.g. cl100k_base=tiktoken:cl100k_base")
        out[encoding] = name
    return out


class Selected:
    """The adapters of a run: built ones as :class:`Calls`, and a row for every one."""

    def __init__(self, registry: Registry, *, isolation: Isolation | None = None) -> None:
        self.registry = registry
        self.isolation = isolation
        self.calls: dict[str, Calls] = {}
        self.rows: dict[str, AdapterRow] = {}
        self.references: dict[str, str] = {}
        #: reference names the cases give, most used first; preferred as defaults
        self.preferred: list[str] = []
        #: names as asked for (case spellings, resolved arguments) -> adapter names
        self.aliases: dict[str, str] = {}
        #: what the run cannot check, said in the summary (an ID space with one adapter)
        self.notes: list[str] = []
        #: encoding -> why its adapters are not judged (its pinned reference cannot run)
        self.unjudged: dict[str, str] = {}
        #: adapter name -> its worker, started ahead by :meth:`start_workers`
        self._started: dict[str, Future[Any]] = {}
        #: the threads that started them, kept until :meth:`close`: a worker dies with the
        #: *thread* that started it (``PR_SET_PDEATHSIG``, harness/worker/limits.py)
        self._starters: ThreadPoolExecutor | None = None
        self._chosen = False

    def start_workers(self, names: Iterable[str], *, at_once: int) -> None:
        """Start the worker processes of those of ``names`` that run in one, ``at_once`` at a
        time, before :meth:`add` asks for them in turn (issue 25).

        A worker spends its start loading its library and tables while this process waits
        (a Node worker: about 0.8 s of its own CPU); one after another, the 19 npm adapters
        of a default run held its select phase for 16 s on two cores. What :meth:`add` makes
        of a worker, or of the error its start raised, is the same either way; a worker
        :meth:`add` never takes is ended by :meth:`close`.
        """
        starts: dict[str, Callable[[], Any]] = {}
        for name in names:
            try:
                spec = self.registry.spec(self.aliases.get(name, name))
            except RegistryError:
                continue  # add() says so, in turn
            if (self._in_worker(spec) and spec.unavailable_reason() is None
                    and spec.name not in self.calls and spec.name not in self._started):
                starts[spec.name] = self._worker_start(spec)
        if at_once < 2 or len(starts) < 2:
            return  # nothing to overlap: add() starts each as it comes
        # threads, not processes: each waits on its worker's pipe, the GIL released
        if self._starters is None:
            self._starters = ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="tokconf-worker-start")
        self._started.update((name, self._starters.submit(start)) for name, start in starts.items())

    def _in_worker(self, spec: AdapterSpec) -> bool:
        """Whether ``spec`` runs in a worker process: an adapter that only runs in one of its
        own (another environment's, in that environment's interpreter; JavaScript, in
        Node), or one the isolation isolates."""
        isolation = self.isolation
        return spec.executor is not None or (isolation is not None and isolation.isolates(spec.name, spec.provider))

    def _worker_start(self, spec: AdapterSpec) -> Callable[[], Any]:
        """What starts ``spec``'s worker (and returns its executor)."""
        isolation = self.isolation
        if spec.executor is not None:
            make = spec.executor
            return lambda: make(isolation)
        from harness.worker.client import WorkerExecutor

        return lambda: WorkerExecutor(spec.name, isolation)

    def _executor(self, spec: AdapterSpec) -> Any:
        """``spec``'s worker: the one started ahead, else started now."""
        started = self._started.pop(spec.name, None)
        if started is None:
            return self._worker_start(spec)()
        executor = started.result()
        try:
            # whoever holds the worker holds its thread: the pool's idle threads end when
            # the pool is dropped, and the worker with them
            executor.starters = self._starters
        except AttributeError:
            pass  # a plugin's executor with __slots__: the run's Selected holds the pool
        return executor

    def add(self, name: str) -> Calls | None:
        """Build ``name`` into the run (once); ``None`` if it is unavailable."""
        name = self.aliases.get(name, name)
        if name in self.calls:
            return self.calls[name]
        if name in self.rows:
            return None
        try:
            spec = self.registry.spec(name)
        except RegistryError as exc:
            raise SelectionError(str(exc)) from exc
        if spec.name in self.calls:
            self.aliases[name] = spec.name
            return self.calls[spec.name]
        try:
            calls, version, isolated = self._build(spec)
        except AdapterUnavailable as exc:
            self.rows[spec.name] = AdapterRow(spec.name, spec.encoding, spec.library,
                                              spec.library_version, False, str(exc) or "unavailable",
                                              provider=spec.provider, language=spec.language,
                                              provenance=self.registry.provenance(spec.name))
            return None
        info = calls.info
        if info.encoding in self.unjudged:
            calls.close()
            self.rows[info.name] = AdapterRow(info.name, info.encoding, info.library or spec.library, version, False,
                                              self.unjudged[info.encoding], provider=spec.provider,
                                              language=info.language, provenance=self.registry.provenance(spec.name))
            return None
        self.aliases[name] = self.aliases[spec.name] = info.name
        self.calls[info.name] = calls
        if self._chosen and info.encoding not in self.references:
            # added after the references were chosen (a case's own reference): the first
            # adapter of a new encoding is its reference
            self.references[info.encoding] = info.name
        reported = getattr(calls.executor, "provenance", None)  # an isolated adapter's, from its worker
        self.rows[info.name] = AdapterRow(info.name, info.encoding, info.library or spec.library, version, True,
                                          None, info.capabilities, spec.provider, isolated=isolated,
                                          language=info.language, vocabulary=info.vocabulary,
                                          provenance=self.registry.provenance(
                                              spec.name, reported=reported if isinstance(reported, Provenance) else None))
        return calls

    def _build(self, spec: AdapterSpec) -> tuple[Calls, str | None, str | None]:
        """The adapter's calls, its library version, and how it is isolated (None: in process)."""
        if not self._in_worker(spec):
            adapter = self.registry.get(spec.name)
            library = adapter.library or spec.library
            return Calls(InProcess(adapter, provider=spec.provider)), library_version(library), None
        reason = spec.unavailable_reason()
        if reason is not None:
            raise AdapterUnavailable(reason)
        executor = self._executor(spec)
        network = executor.network.detail if executor.network else "unknown"
        where = f"worker process ({executor.info.provider})" if spec.executor is not None else "worker process"
        return Calls(executor), executor.version, f"{where}; network: {network}"

    def close(self) -> None:
        """End every worker process of the run (and any started ahead and never taken)."""
        for calls in self.calls.values():
            calls.close()
        self.close_unused()
        if self._starters is not None:
            self._starters.shutdown(wait=False)  # its threads may end now: no worker is left
            self._starters = None

    def close_unused(self) -> None:
        """End the workers :meth:`start_workers` started that :meth:`add` did not take."""
        started, self._started = self._started, {}
        for future in started.values():
            if future.cancel():
                continue  # not started yet (an error or Ctrl-C during select): never will be
            try:
                future.result().close()
            except Exception:  # noqa: BLE001 - it did not start: nothing to end
                pass

    def encodings(self) -> list[str]:
        return sorted({c.info.encoding for c in self.calls.values()})

    def group(self, encoding: str) -> list[Calls]:
        return [self.calls[n] for n in sorted(self.calls) if self.calls[n].info.encoding == encoding]

    def reference_for(self, encoding: str) -> Calls:
        return self.calls[self.references[encoding]]

    def _resolved_preferred(self) -> list[str]:
        """The case-named references that are in this run, as adapter names (repeats kept)."""
        names = []
        for name in self.preferred:
            calls = self.calls.get(self.aliases.get(name, name))
            if calls is not None:  # else not in this run (unavailable, or filtered out)
                names.append(calls.name)
        return names

    def choose_references(self, explicit: Mapping[str, str]) -> None:
        for encoding, name in explicit.items():
            calls = self.add(name)
            if calls is None:
                raise SelectionError(f"--reference {encoding}={name}: {name} is unavailable: {self.rows[name].reason}")
            if calls.info.encoding != encoding:
                raise SelectionError(
                    f"--reference {encoding}={name}: {name} claims encoding {calls.info.encoding!r}, "
                    f"not {encoding!r}; pick an adapter of {encoding}"
                )
        for encoding in self.encodings():
            if encoding in explicit:
                self.references[encoding] = explicit[encoding]
                continue
            # the encoding file names its reference (the vendor's own code for the
            # open-weight ones); otherwise tiktoken's adapter of that name
            default = reference_of(encoding) or f"tiktoken:{encoding}"
            pinned = default in self.registry.names()
            if pinned and self.add(default) is not None:
                self.references[encoding] = default
                continue
            named = [n for n in self._resolved_preferred() if self.calls[n].info.encoding == encoding]
            if named:
                # the cases name it as the reference for this encoding: their authors chose
                # the adapter that does it right (rank merging, not the left-to-right demo;
                # tiktoken's own core in WASM where Python tiktoken has no offline file)
                self.references[encoding] = max(named, key=lambda n: (named.count(n), -named.index(n)))
            elif pinned:
                self._unjudge(encoding, default)
            else:
                self.references[encoding] = self.group(encoding)[0].name
        self._chosen = True

    def _unjudge(self, encoding: str, default: str) -> None:
        """The pinned reference of ``encoding`` cannot run: its other adapters are not judged
        (compared with each other, a port that copies another's bug would agree with it),
        and say why, with the fix."""
        why = (f"not judged: no reference for {encoding}: {default} cannot run ({self.rows[default].reason}); "
               f"fix {default} or pass --reference {encoding}=ADAPTER")
        self.unjudged[encoding] = why
        for calls in self.group(encoding):
            calls.close()
            del self.calls[calls.name]
            self.rows[calls.name] = dataclasses.replace(self.rows[calls.name], available=False, reason=why)


def select(
    registry: Registry,
    *,
    impls: Iterable[str] = (),
    encodings: Iterable[str] = (),
    references: Mapping[str, str] | None = None,
    case_adapters: Iterable[str] = (),
    case_references: Iterable[str] = (),
    required: Iterable[str] = (),
    isolation: Isolation | None = None,
) -> Selected:
    """Build the adapters of a run and choose the references.

    ``required``: names the user asked for (``--impl`` and ``--plugin`` adapters); one
    that is unknown or unavailable is a :class:`SelectionError`. ``isolation``: which
    adapters run in worker processes, with which limits (None: all in process).
    """
    required = list(required)
    selected = Selected(registry, isolation=isolation)
    selected.preferred = list(case_references)
    wanted_encodings = set(encodings)
    impls = list(impls)
    from harness.envs.handoff import is_env_spec

    # another environment's adapters join when asked for by name: a default run tests this
    # environment, and an old release's known bugs must not fail it
    # an encoding file may say its adapters join only when asked for (--encoding, --impl):
    # the open-weight vocabularies would make the default run several times longer
    first = [name for name in impls or [s.name for s in registry.specs()
                                        if not is_env_spec(s) and (wanted_encodings or not is_on_request(s.encoding))]
             if not wanted_encodings or _encoding_of(registry, name) in wanted_encodings]
    selected.start_workers(first, at_once=os.cpu_count() or 1)
    try:
        for name in first:
            selected.add(name)
    except BaseException:
        selected.close()  # an unknown --impl, Ctrl-C: no worker outlives the error
        raise
    if not impls:
        # adapters a case names exactly (fixtures): a name that does not resolve is an
        # unavailable row, not a usage error, since the user did not type it
        missing_envs: dict[str, int] = {}
        for name in case_adapters:
            if any(ch in name for ch in "*?[") or name in selected.rows:
                continue
            try:
                encoding = _encoding_of(registry, name)
                if wanted_encodings and encoding not in wanted_encodings:
                    continue
                if not wanted_encodings and is_on_request(encoding):
                    continue  # a case about an open-weight encoding runs when it is asked for
                selected.add(name)
            except SelectionError as exc:
                prefix = name.split(":", 1)[0]
                if "@" in prefix and not any(n.startswith(prefix + ":") for n in registry.names()):
                    # another release's adapter (``pkg@version:...``) whose environment is
                    # not installed here: not this install's to test, so a note, not a row
                    missing_envs[prefix] = missing_envs.get(prefix, 0) + 1
                    continue
                selected.rows[name] = AdapterRow(name, "unknown", "", None, False, str(exc))
        if missing_envs:
            listed = ", ".join(f"{p} ({n} adapter{'s' * (n != 1)})" for p, n in sorted(missing_envs.items()))
            selected.notes.append(f"cases name adapters of environments not installed here, not run: {listed}; "
                                  "`tokconf env add` installs them (README: Gating an upgrade, JavaScript tokenizers)")
    if not impls and not wanted_encodings:
        left_out = sorted({s.encoding for s in registry.specs() if is_on_request(s.encoding)})
        if left_out:
            # said, not silent: these encodings' adapters are registered but not in this run
            selected.notes.append(f"encodings run only when asked for, not in this run: {', '.join(left_out)}; "
                                  "`tokconf run --encoding ENC` runs one (docs/encodings.md)")
        for kind, reason in sorted(registry.load_failures().items()):
            if kind.endswith(":*") and kind not in selected.rows:
                selected.rows[kind] = AdapterRow(kind, "unknown", "", None, False, reason)
    selected.close_unused()
    if wanted_encodings and not selected.rows:
        raise SelectionError(f"no adapter claims encoding(s) {', '.join(sorted(wanted_encodings))}; run `tokconf list`")
    _require(selected, required)
    selected.choose_references(dict(references or {}))
    _require_references(selected, required)
    if not impls and not wanted_encodings and selected.unjudged:
        # a whole run whose built-in encoding has no reference tests far less than it
        # seems to (issue 21: tiktoken unimportable left 29 of 37 adapters out, exit 0)
        raise SelectionError("a built-in encoding's reference cannot run, so its adapters cannot be judged:\n"
                             + "\n".join(f"  {why.removeprefix('not judged: ')}"
                                          for _, why in sorted(selected.unjudged.items()))
                             + "\nfix the reference (`tokconf list` says why it is unavailable), or narrow the "
                               "run with --impl/--encoding to what can run")
    for encoding in selected.encodings():
        group = selected.group(encoding)
        if len(group) == 1 and encoding.startswith("hf-json:"):
            selected.notes.append(
                f"{group[0].name}: its vocabulary is none of the pinned ones, so its ID space {encoding} "
                "has no reference: no ID parity (round trip, decoding and error checks still ran); "
                "pass --encoding ENC if it claims one")
    return selected


def _require(selected: Selected, required: Iterable[str]) -> None:
    failed = []
    for name in dict.fromkeys(required):
        calls = selected.add(name)
        if calls is None:
            row = selected.rows.get(selected.aliases.get(name, name))
            failed.append(f"  {name}: {row.reason if row else 'unavailable'}")
        elif not calls.info.encoding:
            failed.append(f"  {name}: claims no encoding (its `encoding` is empty): IDs cannot be compared "
                          "with anything; set `encoding` to the ID space it reproduces, e.g. cl100k_base")
    if failed:
        raise SelectionError("asked for, but cannot run (nothing was tested):\n" + "\n".join(failed))


def _require_references(selected: Selected, required: Iterable[str]) -> None:
    """An adapter asked for whose encoding has no reference (its pinned reference cannot run,
    and no ``--reference`` was given): nothing can judge it, exit 2."""
    for name in dict.fromkeys(required):
        row = selected.rows.get(selected.aliases.get(name, name))
        if row is not None and row.encoding in selected.unjudged:
            raise SelectionError(selected.unjudged[row.encoding].removeprefix("not judged: "))


def _encoding_of(registry: Registry, name: str) -> str:
    try:
        return registry.spec(name).encoding
    except RegistryError as exc:
        raise SelectionError(str(exc)) from exc
