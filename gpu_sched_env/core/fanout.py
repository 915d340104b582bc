"""Fan-out of independent experiment cells: serially, on local processes, or on Ray.

A *cell* is a picklable mapping of keyword arguments for a top-level function. Results come
back in cell order whatever the executor, and each cell derives all its randomness from its
own seed, so every executor gives identical numbers.

Local worker processes are started with ``forkserver`` (``spawn`` where that is missing),
never ``fork``: forking a process that runs threads (tqdm's monitor, BLAS pools, Ray) can
deadlock, Python 3.12+ warns about it and 3.14 no longer forks by default on Linux. Each
worker runs a watchdog thread that ends it within ``WATCHDOG_S`` of its parent's death, so
a run killed with SIGKILL leaves no orphaned workers behind.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.core.extras import needs_extra

EXECUTORS = ("serial", "process", "ray")
WATCHDOG_S = 0.5  # [s] how often a worker checks that its parent is alive


def start_method() -> str:
    """``forkserver`` where available (Linux, macOS), else ``spawn``; never ``fork``."""
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


def _parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - pid reused by another user's process
        return False
    try:  # a killed parent not yet reaped by its own parent is a zombie: dead too
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:  # no /proc (macOS): os.kill is all we have
        return True


def _watch_parent(pid: int) -> None:
    """Worker initializer: exit this process as soon as process ``pid`` is gone."""

    def watch() -> None:
        while _parent_alive(pid):
            threading.Event().wait(WATCHDOG_S)
        os._exit(1)  # no cleanup: the parent that would collect our results is dead

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes (safe start method; workers die with this process)."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp.get_context(start_method()),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )


def default_workers() -> int:
    """Number of usable CPU cores."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    # disable=None: off when stderr is not a terminal (a log file gets no wall of bar updates)
    return tqdm(total=total, desc=desc, disable=None if enabled else True, dynamic_ncols=True, smoothing=0.1)


def iter_cells(
    fn: Callable[..., Any],
    cells: Sequence[dict[str, Any]],
    executor: str = "process",
    workers: int | None = None,
    desc: str = "cells",
    progress: bool = True,
    ray_address: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, fn(**cell))`` as cells finish (order of completion).

    Args:
        fn: a top-level (picklable) function.
        cells: keyword arguments, one mapping per cell.
        executor: ``serial``, ``process`` (local processes) or ``ray`` (Ray core; a local
            cluster is started when ``ray_address`` is None and none is running).
        workers: processes for ``process`` (default: usable cores).
        desc: progress-bar label.
        progress: show a progress bar with ETA.
        ray_address: address of an existing Ray cluster.
    """
    check_choice("executor", executor, EXECUTORS)
    if workers is not None:
        check_number("workers", workers, lo=1, integer=True)  # 0 is no silent "default"
    bar = _progress(len(cells), desc, progress)
    try:
        if executor == "serial" or len(cells) <= 1:
            for i, c in enumerate(cells):
                yield i, fn(**c)
                bar.update()
        elif executor == "process":
            n = min(workers or default_workers(), len(cells))
            pool = process_pool(n)
            try:
                futs = {pool.submit(fn, **c): i for i, c in enumerate(cells)}
                for f in as_completed(futs):
                    yield futs[f], f.result()
                    bar.update()
            finally:
                # an interrupted consumer (Ctrl-C, closed generator) drops the queued cells
                # instead of waiting for all of them; running ones finish
                pool.shutdown(wait=True, cancel_futures=True)
        else:
            with needs_extra("executor=ray"):
                import ray

            if not ray.is_initialized():
                ray.init(address=ray_address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
            remote = ray.remote(fn)
            refs = {remote.remote(**c): i for i, c in enumerate(cells)}
            pending = list(refs)
            try:
                while pending:
                    done, pending = ray.wait(pending, num_returns=1)
                    for r in done:
                        yield refs[r], ray.get(r)
                        bar.update()
            finally:
                for r in pending:  # interrupted: drop what has not run yet
                    ray.cancel(r)
    finally:
        bar.close()


def map_cells(fn: Callable[..., Any], cells: Sequence[dict[str, Any]], **kwargs: Any) -> list[Any]:
    """Like :func:`iter_cells` but returns results in cell order."""
    out: list[Any] = [None] * len(cells)
    for i, r in iter_cells(fn, cells, **kwargs):
        out[i] = r
    return out
