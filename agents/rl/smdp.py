"""Semi-MDP discounting for MaskablePPO: discount by elapsed simulated time, not by steps.

CGRSP-v0's steps last from 0 s (another assignment at the same instant) to hours (a *wait*
on a quiet night). With a per-step γ the horizon in simulated time changes with the load,
and a burst of same-instant dispatches is discounted as if time had passed. Here each step t
is discounted by ``0.5 ** (dt_t / halflife_s)``, with ``dt_t = info["dt"]`` the simulated
seconds the step advanced (the env reports it), so a reward ``halflife_s`` of simulated time
ahead counts half, whatever the number of decisions in between (Bradtke & Duff 1995).

How it plugs into sb3-contrib: :class:`StepDurations` (a callback) records ``info["dt"]``
into the rollout buffer at the index the step is about to be stored at (callbacks run after
``env.step`` and before ``rollout_buffer.add``), and :class:`TimeDiscountedBuffer` computes
GAE with the per-step discounts. Only the discounting changes; the rest is SB3's code path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback


class TimeDiscountedBuffer(MaskableDictRolloutBuffer):
    """Masked Dict rollout buffer whose GAE uses γ_t = 0.5 ** (dt_t / halflife_s)."""

    def __init__(self, *args: Any, halflife_s: float = 3600.0, **kwargs: Any) -> None:
        self.halflife_s = float(halflife_s)
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        super().reset()
        self.dts = np.zeros((self.buffer_size, self.n_envs), np.float32)  # [s] per stored step

    def step_gammas(self) -> np.ndarray:
        """Per-step discount factors (buffer_size × n_envs)."""
        return np.power(0.5, self.dts / self.halflife_s, dtype=np.float32)

    def compute_returns_and_advantage(self, last_values: th.Tensor, dones: np.ndarray) -> None:
        """GAE(λ) as in SB3, with the per-step discount instead of a constant γ."""
        last_values = last_values.clone().cpu().numpy().flatten()
        gammas = self.step_gammas()
        last_gae_lam = 0.0
        for step in reversed(range(self.buffer_size)):
            if step == self.buffer_size - 1:
                next_non_terminal = 1.0 - dones.astype(np.float32)
                next_values = last_values
            else:
                next_non_terminal = 1.0 - self.episode_starts[step + 1]
                next_values = self.values[step + 1]
            g = gammas[step]
            delta = self.rewards[step] + g * next_values * next_non_terminal - self.values[step]
            last_gae_lam = delta + g * self.gae_lambda * next_non_terminal * last_gae_lam
            self.advantages[step] = last_gae_lam
        self.returns = self.advantages + self.values


class StepDurations(BaseCallback):
    """Store each step's ``info["dt"]`` [s] in a :class:`TimeDiscountedBuffer`."""

    def _on_step(self) -> bool:
        buf = self.model.rollout_buffer
        if isinstance(buf, TimeDiscountedBuffer) and buf.pos < buf.buffer_size:
            buf.dts[buf.pos] = [float(info.get("dt", 0.0)) for info in self.locals["infos"]]
        return True


__all__ = ["StepDurations", "TimeDiscountedBuffer"]
