"""Task profile tables: the documented default table and user tables from CSV or YAML.

A table has one row per (workload, device type) with ``time_min`` (run time of the whole,
unsplit task [min]), ``gpu_pct`` (GPU share it needs [% of that device]) and ``mem_gb``
(memory it needs [GB]). The default table (``default_profiles.csv``) is an *assumption*:
the study did not publish its profiles; see ``docs/edge.md`` for how the numbers were chosen.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.edge.model import DEVICE_TYPES, GPU_CAPACITY_PCT, Profile

DEFAULT_TABLE_PATH = Path(__file__).with_name("default_profiles.csv")
FIELDS = ("workload", "device_type", "time_min", "gpu_pct", "mem_gb")
NUMERIC = {"time_min": (0.0, None), "gpu_pct": (0.0, GPU_CAPACITY_PCT), "mem_gb": (0.0, None)}


@dataclass(frozen=True)
class ProfileTable:
    """Profiles by ``(workload, device_type)``; times stored in seconds."""

    rows: Mapping[tuple[str, str], Profile]
    source: str = "<rows>"

    @property
    def workloads(self) -> tuple[str, ...]:
        """Workloads with at least one row, in first-seen order."""
        return tuple(dict.fromkeys(w for w, _ in self.rows))

    def average(self, device_type: str) -> Profile:
        """Mean profile over the workloads profiled on ``device_type``."""
        ps = [p for (_, dt), p in self.rows.items() if dt == device_type]
        if not ps:
            raise ConfigError(f"profile table {self.source}: no row for device_type {device_type!r}, cannot average")
        k = len(ps)
        return Profile(sum(p.time_s for p in ps) / k, sum(p.gpu_pct for p in ps) / k, sum(p.mem_gb for p in ps) / k)

    def profile_for(self, workload: str, device_types: Iterable[str]) -> tuple[dict[str, Profile], bool]:
        """Profiles of ``workload`` per device type and whether all came from the table.

        A (workload, device type) pair without a row gets the average of that device type's
        profiled rows (the study's rule for unprofiled tasks).
        """
        out: dict[str, Profile] = {}
        profiled = True
        for dt in dict.fromkeys(device_types):
            p = self.rows.get((workload, dt))
            if p is None:
                p, profiled = self.average(dt), False
            out[dt] = p
        return out, profiled


def _row_where(source: str, idx: int, row: Mapping[str, Any], line: int | None) -> str:
    at = f" (line {line})" if line is not None else ""
    key = f"workload={row.get('workload')!r}, device_type={row.get('device_type')!r}"
    return f"profile table {source}: row {idx}{at} [{key}]"


def profiles_from_rows(
    rows: Iterable[Mapping[str, Any]], source: str = "<rows>", lines: list[int] | None = None
) -> ProfileTable:
    """Validate rows (dicts with ``FIELDS``) into a table; errors name the row and field.

    Args:
        rows: mappings with exactly the keys in ``FIELDS``.
        source: file name for messages.
        lines: optional file line number of each row (CSV), for messages.
    """
    table: dict[tuple[str, str], Profile] = {}
    for idx, row in enumerate(rows, start=1):
        line = lines[idx - 1] if lines else None
        where = _row_where(source, idx, row if isinstance(row, Mapping) else {}, line)
        if not isinstance(row, Mapping):
            raise ConfigError(f"{where}: must be a mapping with fields {', '.join(FIELDS)}, got {row!r}")
        unknown = sorted(set(row) - set(FIELDS))
        missing = [f for f in FIELDS if f not in row or row[f] is None or str(row[f]).strip() == ""]
        if unknown:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; allowed: {', '.join(FIELDS)}")
        if missing:
            raise ConfigError(f"{where}: field {missing[0]} is missing or empty; required: {', '.join(FIELDS)}")
        workload = str(row["workload"]).strip()
        dtype = str(row["device_type"]).strip()
        if dtype not in DEVICE_TYPES:
            raise ConfigError(
                f"{where}: field device_type = {dtype!r} is not known; allowed: {', '.join(DEVICE_TYPES)}"
            )
        vals: dict[str, float] = {}
        for f, (lo, hi) in NUMERIC.items():
            raw = row[f]
            try:
                v = float(raw)
            except (TypeError, ValueError):
                raise ConfigError(f"{where}: field {f} = {raw!r} is not a number") from None
            if not (v == v and abs(v) != float("inf")) or v <= lo or (hi is not None and v > hi):
                allowed = f"({lo:g}, {hi:g}]" if hi is not None else f"({lo:g}, inf)"
                raise ConfigError(f"{where}: field {f} = {raw!r} is out of range; allowed: {allowed}")
            vals[f] = v
        if (workload, dtype) in table:
            raise ConfigError(f"{where}: duplicate row for workload {workload!r} on device_type {dtype!r}")
        table[(workload, dtype)] = Profile(vals["time_min"] * 60.0, vals["gpu_pct"], vals["mem_gb"])
    if not table:
        raise ConfigError(f"profile table {source}: no rows")
    return ProfileTable(table, source)


def load_profiles(path: str | os.PathLike) -> ProfileTable:
    """Load a profile table from ``.csv`` or ``.yaml``/``.yml``.

    CSV: a header with ``FIELDS``. YAML: a list of row mappings, or a mapping with key
    ``profiles`` holding that list.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"profile table path {str(path)!r} does not exist or is not a file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            if sorted(h.strip() for h in header) != sorted(FIELDS):
                raise ConfigError(
                    f"profile table {path.name}: header {header!r} must have exactly the columns {', '.join(FIELDS)}"
                )
            rows, lines = [], []
            for r in reader:
                rows.append(
                    {k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in r.items() if k is not None}
                )
                if None in r:
                    raise ConfigError(
                        f"profile table {path.name}: line {reader.line_num} has more cells than the header"
                    )
                lines.append(reader.line_num)
        return profiles_from_rows(rows, path.name, lines)
    if suffix in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"profile table {path.name}: not valid YAML: {exc}") from None
        if isinstance(data, Mapping):
            if set(data) != {"profiles"}:
                raise ConfigError(
                    f"profile table {path.name}: top-level mapping must have only the key 'profiles', got "
                    f"{sorted(data)}"
                )
            data = data["profiles"]
        if not isinstance(data, list):
            raise ConfigError(f"profile table {path.name}: expected a list of rows, got {type(data).__name__}")
        return profiles_from_rows(data, path.name)
    raise ConfigError(f"profile table path {str(path)!r}: suffix must be .csv, .yaml or .yml")


def default_profiles() -> ProfileTable:
    """The documented default table for the five reference workloads (an assumption)."""
    return load_profiles(DEFAULT_TABLE_PATH)
