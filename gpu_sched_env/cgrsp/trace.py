"""Job logs (traces): replay a studio's own jobs, or write any simulated day or month as one.

A trace is a CSV or Parquet file (or a DataFrame) with one row per job:

| column | required | meaning |
|---|---|---|
| ``submit_s`` | yes | submit time [s] from the period's start (0 = ``start_hour_utc``), 0 to 1e9, non-decreasing |
| ``complexity`` | yes | ``low``, ``medium`` or ``high`` |
| ``deadline_s`` | yes | deadline [s] on the same clock, finite, ≥ ``submit_s``, ≤ 1e9 |
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

Times are bounded by :data:`MAX_TIME_S` (1e9 s, about 31.7 years): below it float64 seconds
resolve 1.2e-7 s, so a run time or a window added to a time stays exact to well under a
microsecond. Far beyond it they do not (at 1e20 s neighbouring float64 values are 16 384 s
apart, a job's whole run rounds away and every wait reads 0), so such a trace is refused.

:meth:`Trace.load` reads a file once, front to back, and records the SHA-256 of the bytes it
parsed (:attr:`Trace.sha256`): load a log once and hand the :class:`Trace` to every run, which
then plays those bytes even if the file is replaced meanwhile. CSV is read in blocks by
pyarrow's streaming reader, every value as text, and each block's columns are checked with
vectorised kernels, so memory stays bounded by the parsed jobs plus one block.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
_TIGHT_TOKENS = ("true", "1", "yes", "false", "0", "no")  # the first three are tight
MAX_TIME_S = 1e9  # [s] the largest submit_s / deadline_s a trace may hold (see the module's text)
_TIME_ALLOWED = "allowed: a finite number of seconds ≥ 0 and ≤ 1e9 (about 31.7 years from the period's start)"
# The characters for which str.isspace() is true (tests/cgrsp/test_trace.py checks the list): a
# job_id made of these alone is blank, as str.strip() sees it.
_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_SPACE += "\u2028\u2029\u202f\u205f\u3000"
_BLANK_RE = "^[" + "".join(f"\\x{{{ord(c):x}}}" for c in _SPACE) + "]*$"
_BLOCK = 1 << 20  # [bytes] CSV block: what one parsed block costs in memory, beside the jobs so far
_PARQUET_BATCH = 65536  # rows per Parquet batch

TraceSource = str | os.PathLike | pd.DataFrame
# 100 jobs of a normal day (``scripts/write_trace.py --day normal --seed 0``), shipped with the package
EXAMPLE_TRACE = Path(__file__).resolve().parent / "data" / "example_trace.csv"


# ---------------------------------------------------------------- reading a file once


class _HashingReader(io.RawIOBase):
    """A file handed out front to back exactly once, every byte hashed as it goes (no seeking)."""

    def __init__(self, f: io.BufferedReader) -> None:
        super().__init__()
        self._f = f
        self._sha = hashlib.sha256()
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def _read(self, n: int) -> bytes:
        data = self._f.read(n)
        self._sha.update(data)
        return data

    def head(self) -> bytes:
        """The start of the file up to the end of its first non-blank line (still handed out by ``read``)."""
        buf = bytearray(self._read(65536))
        while buf.strip() and _first_line_end(buf) is None:
            more = self._read(65536)
            if not more:
                break
            buf += more
        self._pending = memoryview(bytes(buf))
        return bytes(buf)

    def readinto(self, b: Any) -> int:
        if self._pending.nbytes:
            n = min(len(b), self._pending.nbytes)
            b[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        n = self._f.readinto(b) or 0
        self._sha.update(memoryview(b)[:n])
        return n

    def hexdigest(self) -> str:
        """The SHA-256 of the whole file (what was not handed out yet is read and hashed first)."""
        while self.read(1 << 20):
            pass
        return self._sha.hexdigest()


def _first_line_end(buf: bytes | bytearray) -> int | None:
    """Where the first non-blank line ends in ``buf`` (None: not within it)."""
    i = 0
    while True:
        j = buf.find(b"\n", i)
        if j < 0:
            return None
        if buf[i:j].strip():
            return j
        i = j + 1


def _header(head: bytes) -> list[str]:
    """The column names on the first non-blank line (the CSV module's reading of that one line)."""
    end = _first_line_end(head)
    lines = [ln for ln in head[: len(head) if end is None else end].split(b"\n") if ln.strip()]
    text = lines[0].decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r") if lines else ""
    return next(csv.reader([text]), [])


def _open(src: str | os.PathLike) -> tuple[Path, str, str]:
    """The checked path, its suffix and what a good file of that type is (for messages)."""
    path = Path(src)
    if path.is_dir():
        raise ConfigError(f"trace = {str(src)!r}: is a folder; allowed: a CSV or Parquet file")
    if not path.is_file():
        raise ConfigError(f"trace = {str(src)!r}: no such file")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise ConfigError(f"trace = {str(src)!r}: unknown file type {suffix!r}; allowed: .csv, .parquet, .pq")
    allowed = f"allowed: a {'CSV' if suffix == '.csv' else 'Parquet'} file with the columns {', '.join(REQUIRED)}"
    return path, suffix, allowed


def _open_file(path: Path) -> io.BufferedReader:
    """The one open of a trace file (a test counts them)."""
    return open(path, "rb")


class _Unreadable(Exception):
    """pyarrow refused the file; ``why`` says what, with a file line where it is known."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _csv_batches(reader: _HashingReader, head: bytes) -> tuple[list[str], Iterator[Any]]:
    """The CSV's column names and its blocks (pyarrow RecordBatches, every column as bytes)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not head.strip():
        raise _Unreadable("EmptyDataError: no header line, the file holds only blank lines")
    bad: list = []

    def on_bad_row(row: Any) -> str:
        bad.append(row)
        return "error"

    def unreadable(exc: Exception) -> _Unreadable:
        if bad:
            row = bad[0]
            where = f"file line {row.number}: " if row.number is not None else ""
            return _Unreadable(
                f"ParserError: {where}{row.actual_columns} fields where the header has {row.expected_columns}: "
                f"{row.text!r}"
            )
        return _Unreadable(f"ParserError: {exc}")

    try:
        stream = pacsv.open_csv(
            reader,
            # one thread: pyarrow numbers a refused row (its file line) only when it parses serially
            read_options=pacsv.ReadOptions(use_threads=False, block_size=_BLOCK),
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_bad_row),
            # bytes, not a parser's guess at a type: every value is checked (UTF-8 included) below
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(_header(head), pa.binary())),
        )
    except pa.ArrowInvalid as exc:
        raise unreadable(exc) from None

    def blocks() -> Iterator[Any]:
        while True:
            try:
                batch = stream.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                raise unreadable(exc) from None
            yield batch

    return list(stream.schema.names), blocks()


def _parquet_batches(data: bytes) -> tuple[list[str], Iterator[Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        names = list(pf.schema_arrow.names)
        # a DataFrame written with its index keeps it as a column: pandas reads it back as the index
        meta = pf.schema_arrow.pandas_metadata or {}
        index = {c for c in meta.get("index_columns", []) if isinstance(c, str)}
        names = [c for c in names if c not in index]
        batches = pf.iter_batches(batch_size=_PARQUET_BATCH, columns=names)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _Unreadable(f"{type(exc).__name__}: {exc}") from None

    def blocks() -> Iterator[Any]:
        try:
            yield from batches
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _Unreadable(f"{type(exc).__name__}: {exc}") from None

    return names, blocks()


class _Block:
    """One block of rows: ``column(name)`` as pyarrow (a file) or pandas (a DataFrame), ``start`` its first row."""

    def __init__(self, src: TraceSource, batch: Any, start: int) -> None:
        self.src, self.batch, self.start = src, batch, start
        self.num_rows = len(batch) if isinstance(batch, pd.DataFrame) else batch.num_rows
        self._names = [str(c) for c in batch.columns] if isinstance(batch, pd.DataFrame) else None
        self._text: dict[str, Any] = {}

    def column(self, name: str) -> Any:
        if self._names is not None:  # a DataFrame: its own values, as they are
            return self.batch[self.batch.columns[self._names.index(name)]]
        if name not in self._text:
            self._text[name] = self._column(name)
        return self._text[name]

    def _column(self, name: str) -> Any:
        col = self.batch.column(name)
        import pyarrow as pa

        if pa.types.is_binary(col.type):  # a CSV column: text, or the first row that is not UTF-8
            import pyarrow.compute as pc

            try:
                return pc.cast(col, pa.string())
            except pa.ArrowInvalid:
                for i, v in enumerate(col.to_pylist()):
                    try:
                        v.decode("utf-8")
                    except UnicodeDecodeError as e:
                        raise ConfigError(
                            f"{_where(self.src, self.start + i)}, column {name} = {v!r}: not UTF-8 text ({e.reason}); "
                            "allowed: a UTF-8 file"
                        ) from None
                raise
        return col


def _file_blocks(src: str | os.PathLike, sha: list[str]) -> tuple[list[str], Iterator[Any]]:
    """Column names and blocks of a trace file, read once; ``sha`` gets the file's SHA-256 once read."""
    path, suffix, allowed = _open(src)

    def fail(why: str) -> ConfigError:
        return ConfigError(f"trace = {str(src)!r}: cannot be read ({why}); {allowed}")

    try:
        f = _open_file(path)
    except OSError as exc:
        raise fail(f"{type(exc).__name__}: {exc}") from None
    try:
        reader = _HashingReader(f)
        head = reader.head()
        if not head:
            raise ConfigError(f"trace = {str(src)!r}: the file is empty; {allowed} and one row per job")
        try:
            if suffix == ".csv":
                names, batches = _csv_batches(reader, head)
            else:
                names, batches = _parquet_batches(reader.read())
        except _Unreadable as e:
            raise fail(e.why) from None
    except BaseException:
        f.close()
        raise

    def blocks() -> Iterator[Any]:
        with f:
            try:
                yield from batches
            except _Unreadable as e:
                raise fail(e.why) from None
            except OSError as exc:
                raise fail(f"{type(exc).__name__}: {exc}") from None
            sha.append(reader.hexdigest())

    return names, blocks()


def read_trace(src: TraceSource) -> pd.DataFrame:
    """A trace as a DataFrame of raw values (every value read as text from CSV, typed from Parquet)."""
    if isinstance(src, pd.DataFrame):
        return src
    import pyarrow as pa

    names, batches = _file_blocks(src, [])
    blocks, start = [], 0
    for batch in batches:
        blocks.append(_Block(src, batch, start))
        start += blocks[-1].num_rows
    if not blocks:
        return pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    return pa.Table.from_pydict({n: pa.chunked_array([b.column(n) for b in blocks]) for n in names}).to_pandas()


def _where(src: TraceSource, i: int) -> str:
    line = f" (file line {i + 2})" if not isinstance(src, pd.DataFrame) and str(src).lower().endswith(".csv") else ""
    return f"trace row {i}{line}"


# ---------------------------------------------------------------- checking the values
# Each column is checked vectorised on pyarrow arrays first (what a valid log takes). Only where
# that does not accept the whole block, the values are checked one by one in Python, which
# decides (the format's rules) and names the first bad row. The vectorised path accepts nothing
# the Python rules refuse, and gives the same values (float parsing is correctly rounded in both).


def _arrow(col: Any) -> Any:
    """The column as a pyarrow array (dictionaries decoded), or None where pyarrow cannot hold it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(col, (pa.Array, pa.ChunkedArray)):
        try:
            col = pa.array(col, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):
            return None
    if pa.types.is_dictionary(col.type):
        try:
            col = pc.cast(col, col.type.value_type)
        except pa.ArrowException:
            return None
    return col


def _series(col: Any) -> pd.Series:
    return col if isinstance(col, pd.Series) else col.to_pandas()


def _value(col: Any, i: int) -> Any:
    return col.iat[i] if isinstance(col, pd.Series) else col[i].as_py()


def _is_text(t: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _index_in(a: Any, values: tuple[str, ...]) -> np.ndarray | None:
    """Each value's position in ``values`` (exact match), or None if any is not there."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        idx = pc.index_in(a, value_set=pa.array(values, type=a.type))
    except pa.ArrowException:
        return None
    return None if idx.null_count else np.asarray(idx.to_numpy(zero_copy_only=False), dtype=np.int64)


def _number(b: _Block, col: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    values = b.column(col)
    a = _arrow(values)
    if a is not None and a.null_count == 0:
        t = a.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or _is_text(t):
            try:
                x = np.array(pc.cast(a, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
            except pa.ArrowException:
                x = None
            if x is not None and bool((np.isfinite(x) & (x >= 0) & (x <= MAX_TIME_S)).all()):
                return x
    out = np.empty(b.num_rows)
    for i, v in enumerate(_series(values)):
        try:
            x = float(v) if not isinstance(v, (bool, np.bool_)) else math.nan
        except (TypeError, ValueError):
            x = math.nan
        if not (math.isfinite(x) and 0 <= x <= MAX_TIME_S):
            raise ConfigError(f"{_where(b.src, b.start + i)}, column {col} = {v!r}: {_TIME_ALLOWED}")
        out[i] = x
    return out


def _complexity(b: _Block) -> np.ndarray:
    values = b.column("complexity")
    a = _arrow(values)
    if a is not None and a.null_count == 0 and _is_text(a.type):
        cx = _index_in(a, COMPLEXITIES)
        if cx is not None:
            return cx
    cx = np.empty(b.num_rows, np.int64)
    for i, v in enumerate(_series(values)):
        if v not in COMPLEXITIES:
            raise ConfigError(
                f"{_where(b.src, b.start + i)}, column complexity = {v!r}: allowed: {', '.join(COMPLEXITIES)}"
            )
        cx[i] = COMPLEXITIES.index(v)
    return cx


def _tight(b: _Block) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    values = b.column("tight")
    a = _arrow(values)
    if a is not None and a.null_count == 0:
        if pa.types.is_boolean(a.type):
            return np.array(a.to_numpy(zero_copy_only=False), dtype=bool)
        if pa.types.is_integer(a.type):
            x = a.to_numpy(zero_copy_only=False)
            if bool(((x == 0) | (x == 1)).all()):
                return x == 1
        elif _is_text(a.type):
            # ASCII blanks only: each is one that str.strip() removes too
            idx = _index_in(pc.utf8_lower(pc.utf8_trim(a, characters=" \t\n\r\x0b\x0c")), _TIGHT_TOKENS)
            if idx is not None:
                return idx < 3
    out = np.empty(b.num_rows, bool)
    for i, v in enumerate(_series(values)):
        s = str(v).strip().lower() if not isinstance(v, (bool, np.bool_)) else str(bool(v)).lower()
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            s = str(int(v))
        if s not in _TRUE | _FALSE:
            raise ConfigError(
                f"{_where(b.src, b.start + i)}, column tight = {v!r}: allowed: true, false, 1, 0, yes, no"
            )
        out[i] = s in _TRUE
    return out


def _job_ids(b: _Block) -> np.ndarray:
    """The block's labels as str (an object array, as ``astype(str)`` gives); blank or missing ones refused."""
    import pyarrow.compute as pc

    values = b.column("job_id")
    a = _arrow(values)
    if (
        a is not None
        and _is_text(a.type)
        and a.null_count == 0
        and not pc.any(pc.match_substring_regex(a, _BLANK_RE)).as_py()
    ):
        return np.asarray(a.to_numpy(zero_copy_only=False), dtype=object)
    raw = _series(values)
    ids = raw.astype(str).to_numpy(dtype=object)
    bad = raw.isna().to_numpy() | np.array([not isinstance(v, str) or v.strip() == "" for v in ids], bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"{_where(b.src, b.start + i)}, column job_id = {_value(values, i)!r}: allowed: a non-empty label"
        )
    return ids


def _check_names(names: list[str]) -> None:
    twice = sorted({c for c in names if names.count(c) > 1})
    missing = [c for c in REQUIRED if c not in names]
    unknown = [c for c in names if c not in REQUIRED + OPTIONAL]
    if missing or unknown or twice:
        what = "; ".join(
            s
            for s in (
                f"missing column(s) {', '.join(missing)}" if missing else "",
                f"unknown column(s) {', '.join(unknown)}" if unknown else "",
                f"column(s) named twice: {', '.join(twice)}" if twice else "",
            )
            if s
        )
        raise ConfigError(f"trace: {what}; required: {', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)}")


def _parse(
    src: TraceSource, names: list[str], batches: Iterator[Any], p: CGRSPParams
) -> tuple[pd.DataFrame, np.ndarray]:
    """Validated jobs and ids from a trace's column names and its blocks of rows, in order."""
    _check_names(names)
    parts: dict[str, list[np.ndarray]] = {"submit": [], "complexity": [], "deadline": [], "tight": [], "id": []}
    n = 0
    last: tuple[float, Any] | None = None  # the submit time of the row above the block, and its raw value
    for batch in batches:
        b = _Block(src, batch, n)
        if b.num_rows == 0:
            continue
        submit, deadline = _number(b, "submit_s"), _number(b, "deadline_s")
        cx = _complexity(b)
        sub_col = b.column("submit_s")
        back = np.flatnonzero(np.diff(submit) < 0) + 1
        if last is not None and submit[0] < last[0]:
            back = np.r_[0, back]
        if back.size:
            i = int(back[0])
            above = _value(sub_col, i - 1) if i else last[1]
            raise ConfigError(
                f"{_where(src, n + i)}, column submit_s = {_value(sub_col, i)!r}: earlier than the row above "
                f"({above!r}); allowed: rows in submit order (non-decreasing submit_s), sort the trace first"
            )
        early = np.flatnonzero(deadline < submit)
        if early.size:
            i = int(early[0])
            raise ConfigError(
                f"{_where(src, n + i)}, column deadline_s = {_value(b.column('deadline_s'), i)!r}: before "
                f"submit_s = {_value(sub_col, i)!r}; allowed: deadline_s ≥ submit_s"
            )
        tight = _tight(b) if "tight" in names else (deadline - submit) <= p.tight_window
        if "job_id" in names:
            parts["id"].append(_job_ids(b))
        for k, v in (("submit", submit), ("complexity", cx), ("deadline", deadline), ("tight", tight)):
            parts[k].append(v)
        last = (float(submit[-1]), _value(sub_col, b.num_rows - 1))
        n += b.num_rows
    if n == 0:
        raise ConfigError("trace: no jobs (the file has a header but no rows); at least one job is required")
    if "job_id" in names:
        ids = np.concatenate(parts.pop("id"))
        dup = pd.Series(ids, dtype=object).duplicated().to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ConfigError(
                f"{_where(src, i)}, column job_id = {ids[i]!r}: already used by an earlier row; allowed: unique labels"
            )
    else:
        ids = np.arange(n)
    cols = {k: parts[k][0] if len(parts[k]) == 1 else np.concatenate(parts.pop(k)) for k in list(parts) if k != "id"}
    return pd.DataFrame(cols), ids


def _load(src: TraceSource, p: CGRSPParams) -> Trace:
    if isinstance(src, pd.DataFrame):
        jobs, ids = _parse(src, [str(c) for c in src.columns], iter([src]), p)
        return Trace(jobs, ids)
    sha: list[str] = []
    names, batches = _file_blocks(src, sha)
    try:
        jobs, ids = _parse(src, names, batches, p)
    finally:
        batches.close()  # a refused file is closed at once, not when the generator is collected
    return Trace(jobs, ids, source=str(src), sha256=sha[0])


def parse_trace(src: TraceSource, p: CGRSPParams) -> tuple[pd.DataFrame, np.ndarray]:
    """Validated columns ``submit``, ``complexity`` (0/1/2), ``deadline``, ``tight`` and the job ids.

    Raises:
        ConfigError: missing or unknown columns, an empty trace, or a malformed value.
    """
    t = _load(src, p)
    return t.jobs, t.job_id


@dataclass(frozen=True)
class Trace:
    """A parsed, validated trace: the jobs in file order, their labels, and the file they came from.

    Load a job log once with :meth:`load` and hand the Trace itself to every run
    (``simulate(trace=...)``, ``CGRSPEnv(trace=...)``, ``run_grid(trace=...)``): each of them
    reads a path again, and a file replaced in between changes what the later runs play. A
    Trace pickles with its parsed arrays, so worker processes get the jobs, not the path.
    """

    jobs: pd.DataFrame  # submit [s], complexity (0/1/2), deadline [s], tight (bool)
    job_id: np.ndarray
    source: str | None = None  # the file read (None: a DataFrame)
    sha256: str | None = None  # hex SHA-256 of the file's bytes, the ones parsed (None: a DataFrame)

    @classmethod
    def load(cls, src: TraceSource | Trace, p: CGRSPParams) -> Trace:
        """Read and validate ``src`` (a path, a DataFrame, or an already loaded trace, returned as is)."""
        if isinstance(src, Trace):
            return src
        if not isinstance(src, (str, os.PathLike, pd.DataFrame)):
            raise ConfigError(
                f"trace = {src!r} is not allowed; allowed: a CSV or Parquet path, a pandas DataFrame or a Trace"
            )
        return _load(src, p)

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.jobs)

    def provenance(self) -> dict[str, Any]:
        """What a report records of the trace: the file, the SHA-256 of its bytes and its rows."""
        return {"trace": self.source, "sha256": self.sha256, "rows": self.n_jobs}

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
    "MAX_TIME_S",
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
