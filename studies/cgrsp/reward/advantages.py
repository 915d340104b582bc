"""PPO's advantages at the dispatch-or-idle decision, by the offered slot's stock level.

Trains MaskablePPO from scratch on CGRSP-v0 in ``slot`` mode for a few rollouts and, at the
end of each rollout, prints the mean GAE advantage and step reward of *leave idle* and
*dispatch* at the decisions where both were legal and another slot was busy, split by the
offered slot's stock (Low, High). This is the diagnosis behind the reading in docs/results_learners.md that a
wrong baseline, not a missing signal, kept PPO from learning the deferral: with the job
choice open (window 16) every action at a Low-stock state gets a far more negative advantage
than average, and the rare *idle* action the larger push downwards.

    python -m studies reward --part advantages --reward deadline --shaping queue --window 16
    python -m studies reward --part advantages --reward capacity --window 1
"""

from __future__ import annotations

import argparse

from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from gpu_sched_agents.rl.policies import FactoredMaskablePolicy
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.obs import SLOT_COLS


class Inspect(BaseCallback):
    """Print advantages by (stock of the offered slot, action) at each rollout's end."""

    def __init__(self, n_types: int, noop: int) -> None:
        super().__init__()
        self.cols = {lv: n_types + SLOT_COLS.index(f"stock_{lv.lower()}") for lv in ("Low", "High")}
        self.busy, self.noop = n_types + SLOT_COLS.index("busy"), noop

    def _on_rollout_end(self) -> None:
        b = self.model.rollout_buffer
        offer = b.observations["offer"].reshape(-1, b.observations["offer"].shape[-1])
        slots = b.observations["slots"].reshape(-1, *b.observations["slots"].shape[2:])
        acts, adv, rew = b.actions.reshape(-1), b.advantages.reshape(-1), b.rewards.reshape(-1)
        masks = b.action_masks.reshape(-1, b.action_masks.shape[-1]).astype(bool)
        choice = masks[:, self.noop] & masks[:, 0] & (slots[:, :, self.busy].sum(1) > 0)
        print(f"rollout at {self.num_timesteps} steps (advantage std {adv.std():.1f}):")
        for level, col in self.cols.items():
            for name, taken in (("idle", acts == self.noop), ("dispatch", acts != self.noop)):
                sel = choice & (offer[:, col] > 0.5) & taken
                if sel.any():
                    print(
                        f"  {level:4s} {name:8s} n={sel.sum():5d}  advantage {adv[sel].mean():9.2f}  reward "
                        f"{rew[sel].mean():8.3f}"
                    )

    def _on_step(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reward", default="deadline")
    ap.add_argument("--shaping", default="queue")
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--gamma", type=float, default=0.995)
    ap.add_argument("--rollouts", type=int, default=3)
    ap.add_argument("--normalize-reward", action="store_true")
    ap.add_argument("--n-steps", type=int, default=2048, help="PPO rollout length per env (default 2048)")
    a = ap.parse_args(argv)
    kw = dict(day="hectic", action_mode="slot", reward=a.reward, shaping=a.shaping, window=a.window)
    venv = DummyVecEnv([lambda: CGRSPEnv(**kw) for _ in range(2)])
    venv.seed(1)
    if a.normalize_reward:
        venv = VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=a.gamma)
    model = MaskablePPO(
        FactoredMaskablePolicy,
        venv,
        n_steps=a.n_steps,
        batch_size=min(256, 2 * a.n_steps),
        n_epochs=5,
        gamma=a.gamma,
        ent_coef=0.01,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [128, 128]},
    )
    model.learn(a.n_steps * 2 * a.rollouts, callback=Inspect(len(CGRSPEnv(**kw).params.gpu_types), a.window))
    return 0
