"""Job-set generator compatible with the Java tool's config and output formats.

Quick use::

    from gpu_sched_env.mig.generator import load_config, generate
    jobs = generate(load_config("test_config.json"), seed=41)
    text = jobs.dumps()   # the Java tool's output format, byte-identical per seed
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpu_sched_env.mig.generator.config import GeneratorConfig, parse_config
from gpu_sched_env.mig.generator.generate import (
    JobSet,
    config_digest,
    generate,
    generate_bulk,
    next_primes,
    piecewise_times,
)
from gpu_sched_env.mig.generator.jsonio import (
    NormalisedFileWarning,
    load_config_file,
    load_jobs_file,
    loads_lenient,
)

SCHEMA_PATH = Path(__file__).with_name("schema.json")


def load_config(source: str | Path | Mapping[str, Any]) -> GeneratorConfig:
    """Validated config from a JSON/YAML file path or an already-parsed mapping."""
    if isinstance(source, Mapping):
        return parse_config(source)
    return parse_config(load_config_file(source))


def load_jobs(path: str | Path) -> JobSet:
    """Read a job file in the Java tool's output format."""
    return JobSet.from_records(load_jobs_file(path), str(path))


__all__ = [
    "SCHEMA_PATH",
    "GeneratorConfig",
    "JobSet",
    "NormalisedFileWarning",
    "config_digest",
    "generate",
    "generate_bulk",
    "load_config",
    "load_config_file",
    "load_jobs",
    "load_jobs_file",
    "loads_lenient",
    "next_primes",
    "parse_config",
    "piecewise_times",
]
