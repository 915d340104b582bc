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


CHUNK = 4096  # draws fetched at once by ChunkedUniforms


class ChunkedUniforms:
    """Uniform draws from one named stream, fetched in chunks (same sequence as one big draw)."""

    __slots__ = ("_gen", "_buf", "_i")

    def __init__(self, gen: np.random.Generator) -> None:
        self._gen = gen
        self._buf: list[float] = []
        self._i = 0

    def take(self, k: int) -> list[float]:
        """The next ``k`` draws."""
        if self._i + k > len(self._buf):
            self._buf = self._buf[self._i :] + self._gen.random(CHUNK).tolist()
            self._i = 0
        out = self._buf[self._i : self._i + k]
        self._i += k
        return out

    def take1(self) -> float:
        """One draw (same sequence as ``take(1)[0]``, without a list)."""
        if self._i >= len(self._buf):
            self._buf = self._gen.random(CHUNK).tolist()
            self._i = 0
        self._i += 1
        return self._buf[self._i - 1]


def make_streams(seed: int, names: Iterable[str]) -> dict[str, np.random.Generator]:
    """Independent generators, one per name."""
    return {n: stream(seed, n) for n in names}
