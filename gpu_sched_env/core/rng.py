"""Seeded, named random streams (common random numbers).

Each source of randomness (arrivals, job attributes, run times, stock, policy …) gets its
own ``numpy.random.Generator`` derived from ``(seed, crc32(name))``. Adding a stream or
drawing more from one never shifts another, so two policies run on the same seed see the
same jobs and run times, and results are identical in one process or many.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np


def stream(seed: int, name: str) -> np.random.Generator:
    """One generator for ``name`` under run ``seed``."""
    if int(seed) < 0:
        raise ValueError(f"seed = {seed!r} must be a non-negative integer")
    key = zlib.crc32(name.encode("utf-8"))
    return np.random.default_rng(np.random.SeedSequence([int(seed), key]))


def make_streams(seed: int, names: Iterable[str]) -> dict[str, np.random.Generator]:
    """Independent generators, one per name."""
    return {n: stream(seed, n) for n in names}
