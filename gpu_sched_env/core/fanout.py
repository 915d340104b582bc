"""Fan-out of independent experiment cells: serially, on local processes, or on Ray.

A *cell* is a picklable mapping of keyword arguments for a top-level function. Results come
back in cell order whatever the executor, and each cell derives all its randomness from its
own seed, so every executor gives identical numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from gpu_sched_env.core.errors import check_choice

EXECUTORS = ("serial", "process", "ray")


def default_workers() -> int:
    """Number of usable CPU cores."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, dynamic_ncols=True, smoothing=0.1)


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
    bar = _progress(len(cells), desc, progress)
    try:
        if executor == "serial" or len(cells) <= 1:
            for i, c in enumerate(cells):
                yield i, fn(**c)
                bar.update()
        elif executor == "process":
            n = min(workers or default_workers(), len(cells))
            pool = ProcessPoolExecutor(max_workers=n)
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
