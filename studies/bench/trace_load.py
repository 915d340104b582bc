"""Benchmark loading a large job log: ``Trace.load`` against the pandas path it replaced (figures and ratios).

    python -m studies bench sim --part trace-load                        # a 1 000 000-row CSV, best of 3 loads each
    python -m studies bench sim --part trace-load --rows 100000 --reps 1  # a quick run
    python -m studies bench sim --part trace-load --format parquet

The log is drawn by the CGRSP generator (``n_jobs`` = ROWS at 0.1 jobs/s, about 116 days back to
back) and written as ``gpu-sched trace`` writes one, with its ``job_id`` and ``tight`` columns.
Each load runs in a fresh child process, which prints its load time (wall), its peak RSS
(``VmHWM``, imports included) and its peak before the load; the table shows the best of
``--reps`` runs of each reader. The reference is the reader as it was before the columnar one,
kept here: pandas ``read_csv(dtype=str)`` (or ``read_parquet``), then every value checked one
by one in Python. Both readers' parsed jobs must be identical (a digest of the arrays, compared
in the parent). Targets of the new reader on a 1 000 000-row CSV: ≤ 3 s and ≤ 300 MB peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from studies.bench import child_json

ROOT = Path(__file__).resolve().parents[2]  # the checkout, where ``studies`` imports from
TARGET_S = 3.0  # [s] load time of a 1 000 000-row CSV
TARGET_MB = 300.0  # [MB] peak RSS of the loading process, imports included
READERS = ("old", "new")
LABELS = {"old": "pandas, value by value (old)", "new": "Trace.load, pyarrow (new)"}


def legacy_load(path: str, p) -> tuple[pd.DataFrame, np.ndarray]:
    """The reader before the columnar one (the reference): pandas, then each value checked in Python."""
    from gpu_sched_env.cgrsp.params import COMPLEXITIES
    from gpu_sched_env.core.errors import ConfigError

    if path.endswith(".csv"):
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    else:
        raw = pd.read_parquet(path)

    def number(col: str) -> np.ndarray:
        out = np.empty(len(raw))
        for i, v in enumerate(raw[col]):
            try:
                x = float(v) if not isinstance(v, (bool, np.bool_)) else math.nan
            except (TypeError, ValueError):
                x = math.nan
            if not math.isfinite(x) or x < 0:
                raise ConfigError(f"trace row {i}, column {col} = {v!r}")
            out[i] = x
        return out

    submit, deadline = number("submit_s"), number("deadline_s")
    cx = np.empty(len(raw), np.int64)
    for i, v in enumerate(raw["complexity"]):
        if v not in COMPLEXITIES:
            raise ConfigError(f"trace row {i}, column complexity = {v!r}")
        cx[i] = COMPLEXITIES.index(v)
    if (np.diff(submit) < 0).any() or (deadline < submit).any():
        raise ConfigError("trace: rows out of submit order or a deadline before its submit time")
    if "tight" in raw.columns:
        tight = np.empty(len(raw), bool)
        for i, v in enumerate(raw["tight"]):
            s = str(v).strip().lower() if not isinstance(v, (bool, np.bool_)) else str(bool(v)).lower()
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                s = str(int(v))
            if s not in ("true", "1", "yes", "false", "0", "no"):
                raise ConfigError(f"trace row {i}, column tight = {v!r}")
            tight[i] = s in ("true", "1", "yes")
    else:
        tight = (deadline - submit) <= p.tight_window
    ids = raw["job_id"].astype(str).to_numpy(dtype=object)
    for i, v in enumerate(ids):
        if v.strip() == "" or pd.isna(raw["job_id"].iat[i]):
            raise ConfigError(f"trace row {i}, column job_id = {v!r}")
    if pd.Series(ids).duplicated().any():
        raise ConfigError("trace: a job_id used twice")
    return pd.DataFrame({"submit": submit, "complexity": cx, "deadline": deadline, "tight": tight}), ids


def digest(jobs: pd.DataFrame, ids: np.ndarray) -> str:
    """SHA-256 over the parsed arrays' bytes and the labels: equal digests, identical jobs."""
    h = hashlib.sha256()
    for c in ("submit", "complexity", "deadline", "tight"):
        h.update(np.ascontiguousarray(jobs[c].to_numpy()).tobytes())
    h.update("\n".join(map(str, ids)).encode())
    return h.hexdigest()


def peak_mb() -> float:
    """The peak RSS [MB] of the running process: ``VmHWM``, which starts afresh at exec, unlike ``ru_maxrss``.

    Linux keeps ``ru_maxrss`` across ``execve``, so a child started by a large parent would
    report the parent's size; ``ru_maxrss`` serves only where there is no ``/proc``.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(reader: str, path: str) -> None:
    """In a fresh process: load ``path`` with ``reader`` and print the figures as JSON."""
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.trace import Trace

    p = make_params("normal")
    before = peak_mb()
    t0 = time.perf_counter()
    if reader == "new":
        t = Trace.load(path, p)
        jobs, ids = t.jobs, t.job_id
    else:
        jobs, ids = legacy_load(path, p)
    dt = time.perf_counter() - t0
    peak = peak_mb()
    print(
        json.dumps(
            {"seconds": dt, "peak_mb": peak, "imports_mb": before, "rows": len(jobs), "digest": digest(jobs, ids)}
        )
    )


def run_child(reader: str, path: Path) -> dict:
    """One load in a fresh process (``python -m studies.bench.trace_load --child``, from the checkout root)."""
    return child_json("studies.bench.trace_load", "--child", reader, str(path))


def write_log(rows: int, path: str) -> None:
    """A generated job log of ``rows`` jobs (0.1 jobs/s) as ``gpu-sched trace`` writes it."""
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.trace import trace_frame, write_trace
    from gpu_sched_env.cgrsp.workload import generate

    write_trace(trace_frame(generate(make_params("normal", n_jobs=rows, arrival_rate=0.1), 0)), path)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 if a target of the 1 000 000-row CSV is missed or the jobs differ)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="jobs in the log (default 1 000 000)")
    ap.add_argument("--reps", type=int, default=3, help="loads per reader, each in a fresh process; the best counts")
    ap.add_argument("--format", choices=("csv", "parquet"), default="csv")
    ap.add_argument("--child", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--write", nargs=2, metavar=("ROWS", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.write:
        write_log(int(args.write[0]), args.write[1])
        return 0
    if args.rows < 1 or args.reps < 1:
        ap.error(f"--rows {args.rows} --reps {args.reps}: allowed: both at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-trace-load-") as tmp:
        t0 = time.perf_counter()
        path = Path(tmp) / f"log_{args.rows}.{args.format}"
        # in a child too: the parent stays small, so nothing of the log's making is in the figures
        subprocess.run(
            [sys.executable, "-m", "studies.bench.trace_load", "--write", str(args.rows), str(path)],
            cwd=ROOT,
            check=True,
        )
        size = path.stat().st_size
        print(
            f"job log: {args.rows:,} rows, {args.format}, {size / 1e6:.1f} MB, "
            f"written in {time.perf_counter() - t0:.1f} s"
        )
        best: dict[str, dict] = {}
        digests: dict[str, set[str]] = {r: set() for r in READERS}
        for _ in range(args.reps):  # alternate the readers, so that a burst of other load hits both
            for r in READERS:
                res = run_child(r, path)
                digests[r].add(res["digest"])
                best[r] = {
                    "seconds": min(res["seconds"], best.get(r, res)["seconds"]),
                    "peak_mb": min(res["peak_mb"], best.get(r, res)["peak_mb"]),
                    "imports_mb": res["imports_mb"],
                }
    print(f"\n{'reader':30s} {'load s':>8s} {'peak RSS MB':>12s} {'peak before the load MB':>24s}")
    for r in READERS:
        b = best[r]
        print(f"{LABELS[r]:30s} {b['seconds']:8.2f} {b['peak_mb']:12.1f} {b['imports_mb']:24.1f}")
    old, new = best["old"], best["new"]
    print(
        f"{'new / old':30s} {new['seconds'] / old['seconds']:7.3f}× {new['peak_mb'] / old['peak_mb']:11.3f}×"
        f"   (old / new: {old['seconds'] / new['seconds']:.1f}× the time, "
        f"{(old['peak_mb'] - old['imports_mb']) / max(new['peak_mb'] - new['imports_mb'], 1e-9):.1f}× the memory "
        "the load adds)"
    )
    same = len(digests["old"] | digests["new"]) == 1
    print(f"parsed jobs identical (old vs new, every run): {'yes' if same else 'NO'}")
    ok = same
    if args.format == "csv" and args.rows == 1_000_000:
        t_ok, m_ok = new["seconds"] <= TARGET_S, new["peak_mb"] <= TARGET_MB
        print(
            f"targets (new reader, 1 000 000-row CSV): load ≤ {TARGET_S:g} s {'ok' if t_ok else 'MISSED'}, "
            f"peak RSS ≤ {TARGET_MB:g} MB {'ok' if m_ok else 'MISSED'}"
        )
        ok = ok and t_ok and m_ok
    return 0 if ok else 1


if __name__ == "__main__":  # the benchmark's child, measured in a fresh interpreter; not a door
    raise SystemExit(main())
