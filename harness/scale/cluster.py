"""The Dask cluster a command runs on: an existing one (``--scheduler``) or an embedded one.

Shared by every command with ``--executor dask`` (``run``'s corpus phase, ``snapshot``,
``gate``), so a laptop and a cluster go through the same code: without ``--scheduler``
the cluster is a ``distributed.LocalCluster`` of ``--jobs`` worker processes of one
thread each. Dask is imported only when a command asks for it: ``tokconf[dask]`` is optional.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DaskMissing", "ExecutorError", "INSTALL", "connect", "disconnect", "require_dask", "worker_count"]

INSTALL = "pip install 'tokconf[dask]'  (or: pip install dask distributed)"


class DaskMissing(Exception):
    """``--executor dask`` without the optional ``dask`` and ``distributed`` packages."""


class ExecutorError(Exception):
    """The cluster cannot run the work (unreachable, or a worker cannot build the adapters)."""


def require_dask() -> None:
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise DaskMissing(f"--executor dask needs the optional packages dask and distributed ({exc}); "
                          f"install them with: {INSTALL}") from exc


def connect(*, scheduler: str | None, workers: int) -> tuple[Any, Any]:
    """``(client, cluster)``: a client of ``scheduler``, or of a LocalCluster it started (``cluster``
    is None for an existing scheduler: it is not ours to close)."""
    import logging

    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler:
            return Client(scheduler, timeout="30s"), None
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        return Client(cluster), cluster
    except (OSError, TimeoutError) as exc:
        disconnect(None, cluster)
        raise ExecutorError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc}); "
                            f"start one (dask scheduler) or drop --scheduler for a local cluster") from exc


def disconnect(client: Any, cluster: Any) -> None:
    for thing in (client, cluster):
        if thing is not None:
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - closing what may already be gone
                pass


def worker_count(client: Any, default: int) -> int:
    try:
        return len(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001 - a closed client: the count it started with
        return default
