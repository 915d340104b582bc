"""File I/O in the Java tool's formats: lenient config reading, job-set JSON read/write.

The Java tool's own config files contain trailing commas (``{"a": 1, }``), which strict JSON
rejects; :func:`load_config_file` removes them and warns, naming the lines. Job files are
written with ``json.dumps(indent=4)`` and Python's shortest float repr, so the same job set
gives the same bytes on every run and platform.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpu_sched_env.core.errors import ConfigError

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])')


class NormalisedFileWarning(UserWarning):
    """A config file was not strict JSON and was normalised (trailing commas removed)."""


def strip_trailing_commas(text: str) -> tuple[str, list[int]]:
    """Remove commas directly before ``}``/``]`` outside strings; return text and 1-based lines."""
    lines: list[int] = []

    def repl(m: re.Match) -> str:
        if m.group(0) == ",":
            lines.append(text.count("\n", 0, m.start()) + 1)
            return ""
        return m.group(0)

    return _TOKEN.sub(repl, text), lines


def loads_lenient(text: str, source: str = "<string>") -> Any:
    """Parse JSON that may contain trailing commas (warns when it had to remove some)."""
    clean, lines = strip_trailing_commas(text)
    if lines:
        warnings.warn(
            f"{source}: removed {len(lines)} trailing comma(s) on line(s) "
            f"{', '.join(map(str, lines))} (not strict JSON; accepted for compatibility with the Java tool)",
            NormalisedFileWarning,
            stacklevel=3,
        )
    try:
        return json.loads(clean)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{source}: not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a config as a mapping from ``.json`` (lenient) or ``.yaml``/``.yml``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: not valid YAML: {e}") from e
    else:
        data = loads_lenient(text, str(path))
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the configuration must be an object, got {type(data).__name__}")
    return dict(data)


JOB_KEYS = ("arrivalTime", "cudaCoresNumber", "deadline", "isStoppable", "priority", "timeslices")


def dumps_records(records: list[dict[str, Any]]) -> str:
    """Serialise job records exactly like the Java tool (4-space indent, keys in its order)."""
    return json.dumps(records, indent=4, allow_nan=False)


def _bad(i: int, key: str, v: Any, allowed: str) -> ConfigError:
    return ConfigError(f"job {i}: {key} = {v!r}; allowed: {allowed}")


def validate_records(data: Any, source: str = "<jobs>") -> list[dict[str, Any]]:
    """Check a parsed job file (list of job objects); raise naming the job, field and value."""
    if not isinstance(data, list):
        raise ConfigError(f"{source}: a job file must be a JSON array, got {type(data).__name__}")
    out = []
    prev = 0.0
    for i, r in enumerate(data):
        if not isinstance(r, Mapping):
            raise ConfigError(f"{source}: job {i} is {type(r).__name__}, allowed: an object")
        keys = set(r)
        missing = [k for k in JOB_KEYS if k not in keys]
        if missing:
            raise ConfigError(f"{source}: job {i} is missing {', '.join(missing)}")
        unknown = keys - set(JOB_KEYS) - {"isMigrable"}
        if unknown:
            raise ConfigError(
                f"{source}: job {i} has unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(JOB_KEYS)}, "
                "isMigrable"
            )
        a = r["arrivalTime"]
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise _bad(i, "arrivalTime", a, "a finite number >= 0 [min]")
        if a < prev:
            raise _bad(i, "arrivalTime", a, f">= the previous job's {prev!r} (jobs in arrival order)")
        prev = a
        for k, lo in (("cudaCoresNumber", 0), ("deadline", -1), ("priority", None)):
            v = r[k]
            if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo):
                raise _bad(i, k, v, "an integer" + (f" >= {lo}" if lo is not None else ""))
        for k in ("isStoppable", "isMigrable"):
            if k in r and not isinstance(r[k], bool):
                raise _bad(i, k, r[k], "true or false")
        ts = r["timeslices"]
        if (
            not isinstance(ts, list)
            or not ts
            or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in ts)
        ):
            raise _bad(i, "timeslices", ts, "a non-empty list of integers >= 0 [MB per minute]")
        out.append(r)
    return out


def load_jobs_file(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a job file in the Java tool's output format."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"job file {str(path)!r} does not exist")
    return validate_records(loads_lenient(path.read_text(encoding="utf-8"), str(path)), str(path))
