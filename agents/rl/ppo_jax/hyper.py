"""The settings of one PPO update, spelled once: the ``algo=ppo_jax`` schema's fields and ``make_train``'s.

:class:`PPOSettings` is the part of the Hydra schema (``PPOJaxConfig`` in
:mod:`gpu_sched_agents.rl.config` extends it) that ``make_train`` reads; :class:`PPOHyper` adds the
three ``train`` fields it needs and checks itself (:meth:`PPOHyper.check`: a ConfigError naming
``algo.<field>`` or ``train.<field>``, its value and what is allowed). :meth:`PPOHyper.of` takes
them from a composed run config. The module imports neither JAX nor Hydra, so the schema does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from gpu_sched_env.core.errors import ConfigError, check_choice, check_number

REWARD_NORMS = ("global", "regime")  # one running return scale, or one per regime of a mixed env


@dataclass
class PPOFields:
    """SB3's PPO settings, by SB3's names: ``algo=ppo``'s schema and ``algo=ppo_jax``'s (``algo.<field>``)."""

    learning_rate: float = 3e-4
    # the learning rate falls linearly to learning_rate × lr_final_frac by the end of training
    # (1 = constant; the long joint-mode setups anneal it, docs/results_learners.md)
    lr_final_frac: float = 1.0
    n_steps: int = 1024  # per env, between updates
    batch_size: int = 256  # minibatch [transitions]
    n_epochs: int = 5
    # the capacity reward prices the future at q/C: a short horizon learns faster (docs/results_learners.md)
    gamma: float = 0.9
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [128, 128])


@dataclass
class PPOSettings(PPOFields):
    """The JAX update's settings (``algo.<field>``); one update = ``train.n_envs`` × ``n_steps`` steps."""

    n_steps: int = 128  # per env, between updates
    batch_size: int = 1024  # minibatch [transitions]; divides train.n_envs × n_steps
    # returns (agents/rl/ppo_jax/returns.py): null = γ per decision; τ [s] = γ^(Δt/τ) per step of Δt simulated seconds
    tau_s: float | None = None
    # the reward's running scale (train.normalize_reward): "global" = one, "regime" = one per regime of a mixed
    # env (day=mixed: each step scaled by its day type × stock model's return std; agents/rl/ppo_jax/ppo.py)
    reward_norm: str = "global"


@dataclass
class PPOHyper(PPOSettings):
    """Everything ``make_train`` needs: the update's settings and ``train``'s envs, budget and reward scaling."""

    n_envs: int = 64
    total_timesteps: int = 1_000_000  # rounded down to whole updates
    normalize_reward: bool = True

    @classmethod
    def of(cls, cfg: Any) -> PPOHyper:
        """A composed ``algo=ppo_jax`` config's: the :class:`PPOSettings` fields from ``algo``, the rest ``train``'s."""
        a, t = cfg.algo, cfg.train
        own: dict[str, Any] = {f.name: a.get(f.name, f.default) for f in fields(PPOSettings) if f.name != "net_arch"}
        return cls(
            **own,
            net_arch=[int(w) for w in a.net_arch],
            n_envs=int(t.n_envs),
            total_timesteps=int(t.total_timesteps),
            normalize_reward=bool(t.normalize_reward),
        )

    def check(self) -> PPOHyper:
        """Itself, or a ConfigError naming the first bad field (``algo.<f>`` / ``train.<f>``) and what is allowed."""
        for name in ("n_steps", "batch_size", "n_epochs"):
            check_number(f"algo.{name}", getattr(self, name), lo=1, integer=True)
        check_number("algo.learning_rate", self.learning_rate, lo=0.0, lo_open=True)
        check_number("algo.lr_final_frac", self.lr_final_frac, lo=0.0, hi=1.0, lo_open=True)
        check_number("algo.gamma", self.gamma, lo=0.0, hi=1.0, lo_open=True)
        check_number("algo.gae_lambda", self.gae_lambda, lo=0.0, hi=1.0)
        check_number("algo.clip_range", self.clip_range, lo=0.0, lo_open=True)
        check_number("algo.ent_coef", self.ent_coef, lo=0.0)
        check_number("algo.vf_coef", self.vf_coef, lo=0.0)
        check_number("algo.max_grad_norm", self.max_grad_norm, lo=0.0, lo_open=True)
        for i, width in enumerate(self.net_arch):
            check_number(f"algo.net_arch[{i}]", width, lo=1, integer=True)
        if self.tau_s is not None:
            check_number("algo.tau_s", self.tau_s, lo=0.0, lo_open=True)
        check_choice("algo.reward_norm", self.reward_norm, REWARD_NORMS)
        check_number("train.n_envs", self.n_envs, lo=1, integer=True)
        rollout = self.steps_per_update
        if rollout % self.batch_size:
            raise ConfigError(
                f"algo.batch_size = {self.batch_size}: must divide one rollout, train.n_envs × algo.n_steps = "
                f"{self.n_envs} × {self.n_steps} = {rollout}"
            )
        if self.total_timesteps < rollout:
            raise ConfigError(
                f"train.total_timesteps = {self.total_timesteps}: less than one update (train.n_envs × algo.n_steps = "
                f"{rollout} steps)"
            )
        return self

    @property
    def time_aware(self) -> bool:
        return self.tau_s is not None

    @property
    def steps_per_update(self) -> int:
        return self.n_envs * self.n_steps

    @property
    def n_updates(self) -> int:
        return self.total_timesteps // self.steps_per_update

    @property
    def n_minibatches(self) -> int:
        return self.steps_per_update // self.batch_size


__all__ = ["REWARD_NORMS", "PPOFields", "PPOHyper", "PPOSettings"]
