"""Vectorised, seeded job-set generation, bulk generation over seeds, and primes.

Each attribute has its own named random stream (``core.rng.stream(seed, name)``), so
changing, say, the memory distribution never changes the arrivals of the same seed.
Memory series that depend on the previous minute are drawn column by column (minute ``k``
for all jobs still running), which keeps the draw order fixed and the loop short.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_json, atomic_write_text
from gpu_sched_env.core.rng import make_streams
from gpu_sched_env.mig.generator.config import ArrivalSpec, AttrSpec, GeneratorConfig, MemorySpec
from gpu_sched_env.mig.generator.distributions import Normal, Uniform, draw_int, to_int
from gpu_sched_env.mig.generator.jsonio import JOB_KEYS, dumps_records, validate_records

STREAMS = ("priority", "deadline", "run_length", "memory", "stoppable", "cores", "arrival", "migrable")
GENERATOR_VERSION = 1  # bump when the same config + seed would give different jobs


@dataclass
class JobSet:
    """Jobs as columns; job ``i``'s memory series is ``memory[offsets[i]:offsets[i+1]]`` [MB]."""

    arrival: np.ndarray  # [min], cumulative, non-decreasing
    cores: np.ndarray
    deadline: np.ndarray  # [min], -1 = none
    stoppable: np.ndarray
    priority: np.ndarray
    offsets: np.ndarray  # n + 1 entries
    memory: np.ndarray  # [MB], flat
    migrable: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.arrival.size)

    @property
    def lengths(self) -> np.ndarray:
        """Run length of each job [min]."""
        return np.diff(self.offsets)

    def series(self, i: int) -> np.ndarray:
        """Memory series of job ``i`` [MB per minute]."""
        return self.memory[self.offsets[i] : self.offsets[i + 1]]

    def to_records(self) -> list[dict[str, Any]]:
        """Job objects in the Java tool's output format (plain Python types)."""
        mem = self.memory.tolist()
        off = self.offsets.tolist()
        cols = zip(
            self.arrival.tolist(),
            self.cores.tolist(),
            self.deadline.tolist(),
            self.stoppable.tolist(),
            self.priority.tolist(),
            strict=True,
        )
        recs = [
            dict(zip(JOB_KEYS, (a, c, d, s, p, mem[off[i] : off[i + 1]]), strict=True))
            for i, (a, c, d, s, p) in enumerate(cols)
        ]
        if self.migrable is not None:
            for r, m in zip(recs, self.migrable.tolist(), strict=True):
                r["isMigrable"] = m
        return recs

    @classmethod
    def from_records(cls, records: Sequence[dict[str, Any]], source: str = "<jobs>") -> JobSet:
        """Build from (validated) job objects."""
        records = validate_records(list(records), source)
        lens = [len(r["timeslices"]) for r in records]
        mig = None
        if records and all("isMigrable" in r for r in records):
            mig = np.array([r["isMigrable"] for r in records], bool)
        return cls(
            arrival=np.array([float(r["arrivalTime"]) for r in records], float),
            cores=np.array([r["cudaCoresNumber"] for r in records], np.int64),
            deadline=np.array([r["deadline"] for r in records], np.int64),
            stoppable=np.array([r["isStoppable"] for r in records], bool),
            priority=np.array([r["priority"] for r in records], np.int64),
            offsets=np.concatenate([[0], np.cumsum(lens, dtype=np.int64)]).astype(np.int64),
            memory=np.array([x for r in records for x in r["timeslices"]], np.int64),
            migrable=mig,
        )

    def dumps(self) -> str:
        """JSON text in the Java tool's format (no final newline, like its files)."""
        return dumps_records(self.to_records())


def _attr(spec: AttrSpec, rng: np.random.Generator, n: int, rounding: str, floor: int) -> np.ndarray:
    if spec.kind in ("fixed", "none"):
        return np.full(n, int(spec.value), np.int64)
    return draw_int(spec.dist, rng, n, rounding, floor)


def _bool(spec: AttrSpec, rng: np.random.Generator, n: int) -> np.ndarray:
    if spec.kind == "fixed":
        return np.full(n, bool(spec.value))
    return rng.random(n) < float(spec.value)


def _memory(spec: MemorySpec, rng: np.random.Generator, lengths: np.ndarray, rounding: str):
    n = lengths.size
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    total = int(offsets[-1])
    cap = spec.max_value
    if spec.kind == "fixed":
        mem = np.full(total, spec.value, np.int64)
    elif spec.kind == "independent":
        mem = draw_int(spec.dist, rng, total, rounding, 0)
    else:
        mem = np.empty(total, np.int64)
        prev = draw_int(spec.first or spec.dist, rng, n, rounding, 0)
        if cap is not None:
            prev = np.minimum(prev, cap)
        mem[offsets[:-1]] = prev
        d = spec.dist
        for k in range(1, int(lengths.max(initial=0))):
            idx = np.flatnonzero(lengths > k)
            p = prev[idx]
            if isinstance(d, Uniform):
                half = int(d.hi - d.lo) // 2
                v = rng.integers(np.maximum(0, p - half), p + half, endpoint=True)
            else:
                assert isinstance(d, Normal)
                sd = d.relative_sd * p if d.relative_sd is not None else d.sd
                v = to_int(rng.normal(p, sd), rounding, 0)
            if cap is not None:
                v = np.minimum(v, cap)
            mem[offsets[idx] + k] = v
            prev[idx] = v
    if cap is not None:
        mem = np.minimum(mem, cap)
    return offsets, mem


def piecewise_times(rates: Sequence[float], start_hour: float, cum_exp: np.ndarray) -> np.ndarray:
    """Invert the cumulative intensity of a periodic piecewise-constant rate [jobs/min per hour].

    ``cum_exp`` are cumulative Exp(1) draws (unit-rate Poisson times); the result are the
    arrival times [min] after ``start_hour`` of the non-homogeneous process.
    """
    r = np.asarray(rates, float)
    t_knots = np.arange(r.size + 1) * 60.0  # [min]
    lam_knots = np.concatenate([[0.0], np.cumsum(r * 60.0)])
    period = lam_knots[-1]
    # shift so that time 0 is start_hour
    h0 = int(start_hour)
    lam0 = lam_knots[h0] + r[h0] * (start_hour - h0) * 60.0
    v = cum_exp + lam0
    cycles = np.floor(v / period)
    rem = v - cycles * period
    k = np.searchsorted(lam_knots, rem, side="right") - 1
    t = t_knots[k] + (rem - lam_knots[k]) / r[k]
    return cycles * t_knots[-1] + t - start_hour * 60.0


def _arrivals(spec: ArrivalSpec, rng: np.random.Generator, n: int) -> np.ndarray:
    if spec.kind == "fixed":
        return np.arange(1, n + 1, dtype=float) * spec.interval
    if spec.kind == "poisson":
        return np.cumsum(rng.exponential(1.0 / spec.rate, size=n))
    if spec.kind == "piecewise":
        return piecewise_times(spec.hourly_rates, spec.start_hour, np.cumsum(rng.exponential(1.0, size=n)))
    return np.cumsum(spec.dist.sample(rng, n))


def generate(cfg: GeneratorConfig, seed: int | None = None, n_jobs: int | None = None) -> JobSet:
    """Generate the job set for ``cfg`` (``seed``/``n_jobs`` override the config's)."""
    seed = cfg.seed if seed is None else int(seed)
    n = cfg.n_jobs if n_jobs is None else int(n_jobs)
    if n < 1:
        raise ConfigError(f"numberOfJobs = {n!r} is out of range; allowed: >= 1")
    s = make_streams(seed, STREAMS)
    rnd = cfg.rounding
    lengths = _attr(cfg.run_length, s["run_length"], n, rnd, 1)
    offsets, mem = _memory(cfg.memory, s["memory"], lengths, rnd)
    return JobSet(
        arrival=_arrivals(cfg.arrival, s["arrival"], n),
        cores=_attr(cfg.cores, s["cores"], n, rnd, 1),
        deadline=_attr(cfg.deadline, s["deadline"], n, rnd, 1),
        stoppable=_bool(cfg.stoppable, s["stoppable"], n),
        priority=_attr(cfg.priority, s["priority"], n, rnd, 1),
        offsets=offsets,
        memory=mem,
        migrable=None if cfg.migrable is None else _bool(cfg.migrable, s["migrable"], n),
    )


def is_prime(k: int) -> bool:
    """Deterministic primality by trial division (seeds are small)."""
    if k < 2:
        return False
    if k % 2 == 0:
        return k == 2
    f = 3
    while f * f <= k:
        if k % f == 0:
            return False
        f += 2
    return True


def next_primes(count: int, start: int = 2) -> list[int]:
    """The ``count`` smallest primes >= ``start``."""
    if count < 0 or start < 0:
        raise ConfigError(f"next_primes(count={count!r}, start={start!r}): allowed: both >= 0")
    out: list[int] = []
    k = start
    while len(out) < count:
        if is_prime(k):
            out.append(k)
        k += 1
    return out


def config_digest(cfg: GeneratorConfig) -> str:
    """SHA-256 of the canonical JSON of the config as read (for manifests)."""
    return hashlib.sha256(json.dumps(cfg.raw, sort_keys=True).encode()).hexdigest()


def generate_bulk(
    cfg: GeneratorConfig, seeds: Iterable[int], out_dir: str | Path, pattern: str = "jobs_seed{seed}.json"
) -> dict[str, Any]:
    """Write one job file per seed plus ``manifest.json``; return the manifest."""
    out_dir = Path(out_dir)
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds = {seeds!r}: allowed: distinct seeds")
    files = []
    for seed in seeds:
        text = generate(cfg, seed).dumps()
        name = pattern.format(seed=seed)
        atomic_write_text(out_dir / name, text)
        files.append(
            {"seed": seed, "file": name, "n_jobs": cfg.n_jobs, "sha256": hashlib.sha256(text.encode()).hexdigest()}
        )
    manifest = {
        "generator": "gpu_sched_env.mig.generator",
        "generator_version": GENERATOR_VERSION,
        "config": dict(cfg.raw),
        "config_sha256": config_digest(cfg),
        "files": files,
    }
    atomic_write_json(out_dir / "manifest.json", manifest)
    return manifest
