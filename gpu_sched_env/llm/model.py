"""LLM inference model: GPU throughput table, requests, cluster, workload presets.

Units: time in seconds, memory in GB, throughput in tokens per second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.core.rng import stream

PHASES = ("PREFILL", "DECODE")


@dataclass(frozen=True)
class GPUType:
    """Memory [GB] and per-phase throughput [tokens/s] of one GPU type."""

    name: str
    memory: float
    prefill_tps: float
    decode_tps: float

    def tps(self, phase: int) -> float:
        """Throughput of phase index 0 (PREFILL) or 1 (DECODE)."""
        return self.prefill_tps if phase == 0 else self.decode_tps


# The spec's figures (H100: prefill ~1000 tok/s, decode ~5000 tok/s); extend via make_cluster().
GPU_TYPES: dict[str, GPUType] = {"H100": GPUType("H100", 80.0, 1000.0, 5000.0)}


@dataclass(frozen=True)
class Requests:
    """Validated requests as parallel arrays (row ``i`` is request ``i``)."""

    req_id: np.ndarray
    model: np.ndarray
    tokens: np.ndarray  # > 0
    phase: np.ndarray  # 0 = PREFILL, 1 = DECODE
    memory: np.ndarray  # [GB] total over the tau GPUs
    tp: np.ndarray  # tensor-parallel degree tau >= 1
    weight: np.ndarray  # >= 0
    arrival: np.ndarray  # [s] >= 0

    @property
    def n(self) -> int:
        """Number of requests."""
        return len(self.tokens)

    def to_frame(self) -> pd.DataFrame:
        """The requests as a DataFrame (phase as its name)."""
        df = pd.DataFrame({k: getattr(self, k) for k in REQUEST_COLUMNS})
        df["phase"] = np.array(PHASES, dtype=object)[self.phase]
        return df


REQUEST_COLUMNS = ("req_id", "model", "tokens", "phase", "memory", "tp", "weight", "arrival")


def requests_from_frame(df: pd.DataFrame, name: str = "requests") -> Requests:
    """Validate a request table; errors name the row, the column and what is allowed."""
    missing = [c for c in REQUEST_COLUMNS if c not in df.columns]
    if missing:
        raise ConfigError(f"{name}: missing column(s) {', '.join(missing)}; required: {', '.join(REQUEST_COLUMNS)}")
    extra = [c for c in df.columns if c not in REQUEST_COLUMNS]
    if extra:
        raise ConfigError(
            f"{name}: unknown column(s) {', '.join(map(str, extra))}; allowed: {', '.join(REQUEST_COLUMNS)}"
        )
    phase = []
    for k, v in enumerate(df["phase"]):
        v = str(v).strip().upper()
        if v not in PHASES:
            raise ConfigError(f"{name} row {k + 1}, column phase = {v!r}: allowed: PREFILL, DECODE")
        phase.append(PHASES.index(v))
    cols = {}
    for col, lo, lo_open, integer in [
        ("tokens", 0, True, False),
        ("memory", 0, False, False),
        ("tp", 1, False, True),
        ("weight", 0, False, False),
        ("arrival", 0, False, False),
    ]:
        for k, v in enumerate(df[col]):
            try:
                check_number(
                    col,
                    float(v) if isinstance(v, str) else v,
                    lo=lo,
                    lo_open=lo_open,
                    integer=integer,
                    section=f"{name} row {k + 1}",
                )
            except (ConfigError, ValueError) as exc:
                raise ConfigError(f"{name} row {k + 1}, column {col} = {v!r}: {exc}") from None
        cols[col] = pd.to_numeric(df[col]).to_numpy(float)
    return Requests(
        df["req_id"].to_numpy(),
        df["model"].astype(str).to_numpy(),
        cols["tokens"],
        np.array(phase, int),
        cols["memory"],
        cols["tp"].astype(int),
        cols["weight"],
        cols["arrival"],
    )


@dataclass(frozen=True)
class LLMCluster:
    """GPU ``j`` is of type ``types[j]``."""

    types: tuple[GPUType, ...]

    @property
    def m(self) -> int:
        """Number of GPUs."""
        return len(self.types)

    @property
    def memory(self) -> np.ndarray:
        """Memory per GPU [GB]."""
        return np.array([g.memory for g in self.types])

    def tps(self, phase: int) -> np.ndarray:
        """Throughput per GPU for a phase [tokens/s]."""
        return np.array([g.tps(phase) for g in self.types])


def make_cluster(counts: Mapping[str, int], table: Mapping[str, Mapping[str, float]] | None = None) -> LLMCluster:
    """Cluster from ``{type: count}``; ``table`` adds/overrides types ``{name: {memory, prefill, decode}}``."""
    types = dict(GPU_TYPES)
    for name, row in (table or {}).items():
        bad = set(row) - {"memory", "prefill", "decode"}
        if bad or len(row) != 3:
            raise ConfigError(f"throughput table {name}: needs exactly memory, prefill, decode; got {sorted(row)}")
        vals = {k: check_number(f"{name}.{k}", v, lo=0, lo_open=True) for k, v in row.items()}
        types[name] = GPUType(name, float(vals["memory"]), float(vals["prefill"]), float(vals["decode"]))
    if not isinstance(counts, Mapping):
        raise ConfigError(
            f"cluster = {counts!r} is not allowed; allowed: a mapping {{GPU type: count}} "
            f"with GPU types {', '.join(types)}"
        )
    out = []
    for name, count in counts.items():
        if name not in types:
            raise ConfigError(
                f"cluster = {dict(counts)!r}: GPU type {name!r} is not known; allowed: {', '.join(types)}"
            )
        out += [types[name]] * int(check_number(f"cluster.{name}", count, lo=0, integer=True))
    if not out:
        raise ConfigError(f"cluster {dict(counts)!r} has no GPUs")
    return LLMCluster(tuple(out))


@dataclass(frozen=True)
class Workload:
    """Requests plus the cluster that serves them."""

    name: str
    requests: Requests
    cluster: LLMCluster


def discriminating() -> Workload:
    """The spec's reference: 20 prefill requests at t = 0 on 16 H100, Qwen3 30B at tau = 2.

    Requests 1-8: weight 1, 2000 tokens; requests 9-20: weight 10, 500 tokens. 30 GB per
    request (15 GB per GPU), so 8 requests run at once (GPUs are not shared).
    """
    n = 20
    heavy = np.arange(n) < 8
    reqs = Requests(
        np.arange(1, n + 1),
        np.full(n, "Qwen3-30B", dtype=object),
        np.where(heavy, 2000.0, 500.0),
        np.zeros(n, int),
        np.full(n, 30.0),
        np.full(n, 2),
        np.where(heavy, 1.0, 10.0),
        np.zeros(n),
    )
    return Workload("discriminating", reqs, make_cluster({"H100": 16}))


def mixed(seed: int = 0, n: int = 200, rate: float = 4.0, gpus: int = 16) -> Workload:
    """Seeded random workload: Poisson arrivals at ``rate`` [1/s], mixed phases and tau.

    Models (memory total, tau): 7B (15 GB, 1), Qwen3-30B (30 GB, 2), 70B (140 GB, 4).
    Prefill requests have 200-4000 tokens, decode requests 500-20000; weights 1 or 10.
    """
    check_number("n", n, lo=1, integer=True)
    check_number("rate", rate, lo=0, lo_open=True)
    arr = stream(seed, "llm.arrivals")
    attr = stream(seed, "llm.attributes")
    arrival = np.round(np.cumsum(arr.exponential(1.0 / rate, n)), 2)  # on the 0.01 s grid
    kind = attr.choice(3, size=n, p=[0.5, 0.35, 0.15])
    names = np.array(["7B", "Qwen3-30B", "70B"], dtype=object)[kind]
    memory = np.array([15.0, 30.0, 140.0])[kind]
    tp = np.array([1, 2, 4])[kind]
    phase = (attr.random(n) < 0.5).astype(int)
    tokens = np.where(phase == 0, attr.integers(20, 401, n) * 10.0, attr.integers(10, 401, n) * 50.0)
    weight = np.where(attr.random(n) < 0.3, 10.0, 1.0)
    reqs = Requests(np.arange(1, n + 1), names, tokens, phase, memory, tp, weight, arrival)
    return Workload(f"mixed(seed={seed})", reqs, make_cluster({"H100": gpus}))


WORKLOADS = {"discriminating": discriminating, "mixed": mixed}


def resolve_workload(
    workload: str | Workload | pd.DataFrame, seed: int = 0, cluster: Mapping[str, int] | None = None
) -> Workload:
    """A workload from a preset name, a Workload, or a request table (+ ``cluster`` counts)."""
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, pd.DataFrame):
        return Workload("table", requests_from_frame(workload), make_cluster(cluster or {"H100": 16}))
    check_choice("workload", workload, WORKLOADS)
    if cluster is not None:
        raise ConfigError(f"cluster = {cluster!r}: only allowed with a request table (presets fix their cluster)")
    return discriminating() if workload == "discriminating" else mixed(seed)
