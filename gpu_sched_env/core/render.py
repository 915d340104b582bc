"""Renderings shared by the envs: render-mode validation and a NumPy-only Gantt image."""

from __future__ import annotations

from collections.abc import Iterable

import gymnasium as gym
import numpy as np

from gpu_sched_env.core.errors import ResetNeededError, check_choice

RENDER_MODES = ("ansi", "rgb_array")  # every env; ``None`` renders nothing
# tab10 colours (RGB): bar colour = key mod 10, so a job keeps its colour across frames
PALETTE = np.array(
    [
        [31, 119, 180],
        [255, 127, 14],
        [44, 160, 44],
        [214, 39, 40],
        [148, 103, 189],
        [140, 86, 75],
        [227, 119, 194],
        [127, 127, 127],
        [188, 189, 34],
        [23, 190, 207],
    ],
    dtype=np.uint8,
)


def check_render_mode(render_mode: str | None, modes: tuple[str, ...] = RENDER_MODES) -> str | None:
    """``None`` or one of ``modes`` (default ``"ansi"``, ``"rgb_array"``); anything else raises ``ConfigError``."""
    if render_mode is not None:
        check_choice("render_mode", render_mode, modes)
    return render_mode


def render_ready(render_mode: str | None, started: bool) -> bool:
    """The shared start of every env's ``render()``.

    ``False`` (with gymnasium's warning) when the env has no render mode;
    :class:`ResetNeededError` before the first reset; else ``True``.
    """
    if render_mode is None:
        gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
        return False
    if not started:
        raise ResetNeededError("call reset() before render()")
    return True


def gantt_rgb(
    n_rows: int,
    bars: Iterable[tuple[int, float, float, int]],
    t_end: float,
    now: float | None = None,
    width: int = 480,
    row_px: int = 14,
) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 Gantt chart: one row per resource, time left to right.

    Args:
        n_rows: resources (rows), top to bottom.
        bars: ``(row, start, end, key)``; ``key`` picks the colour.
        t_end: time at the right edge (same unit as the bars; > 0).
        now: optional current time, drawn as a red vertical line.
        width: image width [px].
        row_px: row height [px] (a 2 px gap separates rows).
    """
    img = np.full((max(1, n_rows) * row_px, width, 3), 255, np.uint8)
    img[row_px - 1 :: row_px] = 220  # row separators
    scale = (width - 1) / max(float(t_end), 1e-12)
    for row, start, end, key in bars:
        x0 = int(np.clip(start * scale, 0, width - 1))
        x1 = int(np.clip(end * scale, x0 + 1, width))
        img[row * row_px + 1 : (row + 1) * row_px - 2, x0:x1] = PALETTE[int(key) % len(PALETTE)]
    if now is not None and np.isfinite(now):
        img[:, int(np.clip(now * scale, 0, width - 1))] = (214, 39, 40)
    return img
