"""Job logs (traces): replay a studio's own jobs, or write any simulated day or month as one.

A trace is a CSV or Parquet file (or a DataFrame) with one row per job:

| column | required | meaning |
|---|---|---|
| ``submit_s`` | yes | submit time [s] from the period's start (0 = ``start_hour_utc``), finite, ≥ 0, non-decreasing |
| ``complexity`` | yes | ``low``, ``medium`` or ``high`` |
| ``deadline_s`` | yes | deadline [s] on the same clock, finite, ≥ ``submit_s`` |
| ``job_id`` | no | any unique, non-empty label (default: the row number) |
| ``tight`` | no | ``true``/``false`` (or 1/0): a rush order; default: ``deadline_s − submit_s ≤ tight_window`` |

The jobs replace the generated day; everything else still comes from the model and the
seed: realised run times (drawn per job and GPU type from the ``cgrsp/runtimes`` stream, as
for a generated day), stock status and provisioning delays. Nothing is dropped or
re-ordered: rows must already be in submit order (a row submitted before the one above it
is an error), job ids are the row order, and a malformed value raises
:class:`~gpu_sched_env.core.errors.ConfigError` naming the row, the column, the value and
what is allowed. The whole trace is one simulated period (one ``simulate`` run, one env
episode), however many days it spans; the time-of-day bands repeat every 24 h.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.params import COMPLEXITIES, CGRSPParams, make_params, with_overrides
from gpu_sched_env.cgrsp.workload import (
    Workload,
    draw_runtimes,
    generate,
    month_day_seed,
    month_plan,
)
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_table

REQUIRED = ("submit_s", "complexity", "deadline_s")
OPTIONAL = ("job_id", "tight")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}

TraceSource = str | os.PathLike | pd.DataFrame
# 100 jobs of a normal day (``scripts/write_trace.py --day normal --seed 0``), shipped with the package
EXAMPLE_TRACE = Path(__file__).resolve().parent / "data" / "example_trace.csv"


def read_trace(src: TraceSource) -> pd.DataFrame:
    """A trace as a DataFrame of raw values (every value read as text from CSV, typed from Parquet)."""
    if isinstance(src, pd.DataFrame):
        return src
    path = Path(src)
    if not path.is_file():
        raise ConfigError(f"trace = {str(src)!r}: no such file")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise ConfigError(f"trace = {str(src)!r}: unknown file type {suffix!r}; allowed: .csv, .parquet, .pq")
    allowed = f"allowed: a {'CSV' if suffix == '.csv' else 'Parquet'} file with the columns {', '.join(REQUIRED)}"
    if path.stat().st_size == 0:
        raise ConfigError(f"trace = {str(src)!r}: the file is empty; {allowed} and one row per job")
    try:
        if suffix == ".csv":
            # text, not pandas' float parser: every value is parsed (and checked) below, exactly
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        return pd.read_parquet(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        raise ConfigError(f"trace = {str(src)!r}: cannot be read ({type(exc).__name__}: {exc}); {allowed}") from None


def _where(src: TraceSource, i: int) -> str:
    line = f" (file line {i + 2})" if not isinstance(src, pd.DataFrame) and str(src).lower().endswith(".csv") else ""
    return f"trace row {i}{line}"


def _number(src: TraceSource, col: str, values: pd.Series) -> np.ndarray:
    out = np.empty(len(values))
    for i, v in enumerate(values):
        try:
            x = float(v) if not isinstance(v, (bool, np.bool_)) else math.nan
        except (TypeError, ValueError):
            x = math.nan
        if not math.isfinite(x) or x < 0:
            raise ConfigError(f"{_where(src, i)}, column {col} = {v!r}: allowed: a finite number of seconds ≥ 0")
        out[i] = x
    return out


def _tight(src: TraceSource, values: pd.Series) -> np.ndarray:
    out = np.empty(len(values), bool)
    for i, v in enumerate(values):
        s = str(v).strip().lower() if not isinstance(v, (bool, np.bool_)) else str(bool(v)).lower()
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            s = str(int(v))
        if s not in _TRUE | _FALSE:
            raise ConfigError(f"{_where(src, i)}, column tight = {v!r}: allowed: true, false, 1, 0, yes, no")
        out[i] = s in _TRUE
    return out


def parse_trace(src: TraceSource, p: CGRSPParams) -> tuple[pd.DataFrame, np.ndarray]:
    """Validated columns ``submit``, ``complexity`` (0/1/2), ``deadline``, ``tight`` and the job ids.

    Raises:
        ConfigError: missing or unknown columns, an empty trace, or a malformed value.
    """
    raw = read_trace(src)
    cols = [str(c) for c in raw.columns]
    missing = [c for c in REQUIRED if c not in cols]
    unknown = [c for c in cols if c not in REQUIRED + OPTIONAL]
    if missing or unknown:
        what = (
            (f"missing column(s) {', '.join(missing)}" if missing else "")
            + ("; " if missing and unknown else "")
            + (f"unknown column(s) {', '.join(unknown)}" if unknown else "")
        )
        raise ConfigError(f"trace: {what}; required: {', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)}")
    if len(raw) == 0:
        raise ConfigError("trace: no jobs (the file has a header but no rows); at least one job is required")
    submit = _number(src, "submit_s", raw["submit_s"])
    deadline = _number(src, "deadline_s", raw["deadline_s"])
    cx = np.empty(len(raw), np.int64)
    for i, v in enumerate(raw["complexity"]):
        if v not in COMPLEXITIES:
            raise ConfigError(f"{_where(src, i)}, column complexity = {v!r}: allowed: {', '.join(COMPLEXITIES)}")
        cx[i] = COMPLEXITIES.index(v)
    back = np.flatnonzero(np.diff(submit) < 0)
    if back.size:
        i = int(back[0]) + 1
        raise ConfigError(
            f"{_where(src, i)}, column submit_s = {raw['submit_s'].iat[i]!r}: earlier than the row above "
            f"({raw['submit_s'].iat[i - 1]!r}); allowed: rows in submit order (non-decreasing submit_s), "
            "sort the trace first"
        )
    early = np.flatnonzero(deadline < submit)
    if early.size:
        i = int(early[0])
        raise ConfigError(
            f"{_where(src, i)}, column deadline_s = {raw['deadline_s'].iat[i]!r}: before submit_s = "
            f"{raw['submit_s'].iat[i]!r}; allowed: deadline_s ≥ submit_s"
        )
    if "tight" in cols:
        tight = _tight(src, raw["tight"])
    else:
        tight = (deadline - submit) <= p.tight_window
    if "job_id" in cols:
        ids = raw["job_id"].astype(str).to_numpy(dtype=object)
        for i, v in enumerate(ids):
            if v.strip() == "" or pd.isna(raw["job_id"].iat[i]):
                raise ConfigError(
                    f"{_where(src, i)}, column job_id = {raw['job_id'].iat[i]!r}: allowed: a non-empty label"
                )
        dup = pd.Series(ids).duplicated()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ConfigError(
                f"{_where(src, i)}, column job_id = {raw['job_id'].iat[i]!r}: already used by an earlier row; "
                "allowed: unique labels"
            )
    else:
        ids = np.arange(len(raw))
    return pd.DataFrame({"submit": submit, "complexity": cx, "deadline": deadline, "tight": tight}), ids


@dataclass(frozen=True)
class Trace:
    """A parsed, validated trace: the jobs in file order and their labels."""

    jobs: pd.DataFrame  # submit [s], complexity (0/1/2), deadline [s], tight (bool)
    job_id: np.ndarray

    @classmethod
    def load(cls, src: TraceSource | Trace, p: CGRSPParams) -> Trace:
        """Read and validate ``src`` (a path, a DataFrame, or an already loaded trace)."""
        if isinstance(src, Trace):
            return src
        if not isinstance(src, (str, os.PathLike, pd.DataFrame)):
            raise ConfigError(
                f"trace = {src!r} is not allowed; allowed: a CSV or Parquet path, a pandas DataFrame or a Trace"
            )
        return cls(*parse_trace(src, p))

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.jobs)

    def workload(self, p: CGRSPParams, seed: int) -> Workload:
        """The trace's jobs with run times drawn for run ``seed`` (the model's log-normal)."""
        cx = self.jobs["complexity"].to_numpy()
        return Workload(
            self.jobs["submit"].to_numpy(),
            cx,
            self.jobs["tight"].to_numpy(),
            self.jobs["deadline"].to_numpy(),
            draw_runtimes(p, seed, cx),
            job_id=self.job_id,
        )

    def params(self, p: CGRSPParams) -> CGRSPParams:
        """``p`` with ``n_jobs`` set to the trace's length (what the env's observation scales by)."""
        return with_overrides(p, n_jobs=self.n_jobs)


def trace_frame(wl: Workload, day_offset_s: float = 0.0, id_prefix: str = "") -> pd.DataFrame:
    """A workload's jobs as a trace (submit and deadline shifted by ``day_offset_s`` [s])."""
    ids = wl.job_id if wl.job_id is not None else np.arange(wl.n_jobs)
    return pd.DataFrame(
        {
            "job_id": [f"{id_prefix}{j}" for j in ids],
            "submit_s": wl.submit + day_offset_s,
            "complexity": np.asarray(COMPLEXITIES, dtype=object)[wl.complexity],
            "deadline_s": wl.deadline + day_offset_s,
            "tight": wl.tight.astype(bool),
        }
    )


def day_trace(day: str, seed: int, **params: object) -> pd.DataFrame:
    """The jobs ``simulate(policy, day, seed, **params)`` runs, as a trace."""
    return trace_frame(generate(make_params(day, **params), seed))


def month_trace(rep: int, **params: object) -> pd.DataFrame:
    """Replication ``rep`` of the ``month`` experiment (same day plan and run seeds), days back to back.

    Day d's times are shifted by d·86 400 s and its job ids prefixed ``dDD-``.
    """
    parts = [
        trace_frame(generate(make_params(day, **params), month_day_seed(rep, d)), 86400.0 * d, f"d{d:02d}-")
        for d, day in enumerate(month_plan(rep))
    ]
    return pd.concat(parts, ignore_index=True)


def write_trace(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a trace atomically as CSV (floats at full precision: they read back exactly) or Parquet."""
    path = Path(path)
    if path.suffix not in (".csv", ".parquet"):
        raise ConfigError(f"trace path {str(path)!r}: allowed suffixes .csv, .parquet")
    if path.suffix == ".csv":  # pandas writes the shortest repr of each float, which reads back exactly
        df = df.assign(tight=df["tight"].map({True: "true", False: "false"}))
    return atomic_write_table(path, df)


__all__ = [
    "EXAMPLE_TRACE",
    "OPTIONAL",
    "REQUIRED",
    "Trace",
    "day_trace",
    "month_trace",
    "parse_trace",
    "read_trace",
    "trace_frame",
    "write_trace",
]
