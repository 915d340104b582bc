"""Typed Hydra schemas for training (registered in the ConfigStore).

Every YAML option in ``conf/`` is validated against one of these dataclasses, so a misspelt
key or a value of the wrong type fails when the config is composed, before any training,
with Hydra's message naming the key (e.g. ``Key 'lr' not in 'PPOConfig'``). The ``env``
schema is not written here: it is derived from the env's own
:class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig`, whose checks run when
:func:`gpu_sched_agents.rl.envs.env_config` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from gpu_sched_agents.rl.ppo_jax.hyper import PPOFields, PPOSettings
from gpu_sched_agents.rl.scenarios import SPECS, CGRSPScenario, scenario_schema
from gpu_sched_env.cgrsp.config import hydra_schema


@dataclass
class PPOConfig(PPOFields):
    """MaskablePPO (``ppo``) or plain PPO (``ppo_unmasked``) hyper-parameters."""

    name: str = "ppo"
    # semi-MDP (CGRSP only): discount by simulated time, γ_t = 0.5 ** (dt / time_halflife_s); None = per-step gamma
    time_halflife_s: float | None = None
    # behaviour-cloning warm start (MaskablePPO on CGRSP only): a CGRSP heuristic's name, or None for none
    bc_teacher: str | None = None
    bc_episodes: int = 10
    bc_epochs: int = 10
    # the scenarios' box observations (not CGRSP's): "flat" as given, or "log1p", sign(x)·log(1 + |x|) of
    # each entry (agents/rl/policies.py SignedLog1p: raw minutes and megabytes saturate the MLP otherwise)
    features: str = "flat"
    # the scenarios only: the no-op (the last action: MIG-v0's defer) masked wherever another action is legal
    place_first: bool = False


@dataclass
class PPOJaxConfig(PPOSettings):
    """PPO in JAX (``ppo_jax``, agents/rl/ppo_jax; CGRSP only): the update's settings, its evaluations, its pick.

    The update's fields are :class:`~gpu_sched_agents.rl.ppo_jax.hyper.PPOSettings`' (spelled
    there once, read by ``make_train`` through ``PPOHyper.of``); these are the evaluations'.
    """

    name: str = "ppo_jax"
    # in-JAX evaluation after training: the learned policy paired with these JAX rules on this many
    # native JAX test days (keys 20 000 …); 0 = none. The strongest rule by default: each rule costs
    # about a minute per 1000 hectic days on 2 cores (docs/performance.md)
    jax_eval_seeds: int = 1000
    jax_eval_rules: list[str] = field(default_factory=lambda: ["spt_rescue_defer_exp"])
    # model selection: 0 = best_model has the lowest objective on CGRSP-v0's train.eval_seeds (algo=ppo's);
    # N > 0 = picked on N native JAX selection days (keys 10 000 …) at each evaluation, lexicographically
    # against the first jax_eval_rules rule on the same days: no more misses, then the lowest wait
    select_days: int = 0
    # steps between those selections (null: every train.eval_freq); the CGRSP-v0 evaluations
    # (eval/*, learning_curve) keep train.eval_freq, so a cheap JAX selection can run more often
    select_every: int | None = None
    # regimes the selection plays (names <day>_fresh / <day>_D<dwell s>, e.g. the protocol's hectic_fresh,
    # hectic_D900, surge_fresh, surge_D900; [] = the run's own regime): select_days days in each, and the
    # checkpoint whose worst regime is best is kept (constraint.worst_regime_key: the fewest regimes with
    # more misses than the rule, then the worst wait excess in units of the generalist's 2 % margin)
    select_regimes: list[str] = field(default_factory=list)
    # how the selection ranks (null: lexicographic on the run's regime, worst_regime with select_regimes);
    # objective: the lowest mean wait plus a miss priced as one job-hour on the selection days, no rule played
    select_by: str | None = None
    # the pick's second stage (0 = off): at the end of training the recheck_top best evaluations are replayed
    # on recheck_days further selection days (keys after select_days'; each regime's with select_regimes), and
    # best_model is the pick on both stages' days pooled (constraint.pooled_pick / pooled_regime_pick)
    recheck_days: int = 0
    recheck_top: int = 8


@dataclass
class DQNConfig:
    """Masked DQN hyper-parameters."""

    name: str = "dqn"
    learning_rate: float = 1e-4
    buffer_size: int = 50_000
    learning_starts: int = 2_000
    batch_size: int = 128
    gamma: float = 0.995
    tau: float = 1.0
    train_freq: int = 4
    gradient_steps: int = 1
    target_update_interval: int = 2_000
    exploration_fraction: float = 0.3
    exploration_initial_eps: float = 1.0
    exploration_final_eps: float = 0.05
    max_grad_norm: float = 10.0
    net_arch: list[int] = field(default_factory=lambda: [128, 128])


@dataclass
class DayConfig:
    """The CGRSP day type trained and evaluated on (CGRSP only: ``scenario=hgsp|llm|mig|edge`` refuses it).

    ``stock_mix`` (``day=mixed`` with ``algo=ppo_jax`` only): the stock models the mixed training
    days are drawn under, uniformly, each ``fresh`` or a Markov mean dwell D in seconds
    (``day.stock_mix=[fresh,300,900,3600]``: the generalist, ``experiment=generalist``);
    null: the env's own stock model.

    ``day_mix`` (``day=mixed`` only, both learners): day type → weight the training days are drawn
    with (``day.day_mix={hectic:1,surge:1,normal:1,quiet:1}``); null: the month's mix, 4 hectic,
    3 surge, 18 normal, 5 quiet of 30. Evaluation stays on the hectic day. Typed ``Any``: OmegaConf can
    neither merge a mapping into a null ``dict`` node nor add keys to a struct one; ``day_mix`` checks it.
    """

    name: str = "hectic"
    stock_mix: list[str] | None = None
    day_mix: Any = None


@dataclass
class TrainConfig:
    """Budget, vectorisation, evaluation and checkpointing."""

    total_timesteps: int = 100_000
    n_envs: int = 2
    vec_env: str = "dummy"  # dummy | subproc
    eval_freq: int = 10_000  # env steps between evaluations (all envs together)
    eval_seeds: list[int] = field(default_factory=lambda: list(range(10_000, 10_005)))
    final_eval_seeds: int = 30  # final table on seeds 20_000 … 20_000 + n − 1
    checkpoint_freq: int = 10_000  # steps between checkpoints (SB3: first rollout boundary at or after each multiple)
    normalize_reward: bool = False  # VecNormalize on rewards only (running return scale)
    progress_bar: bool = True
    device: str = "cpu"  # torch device (SB3 algorithms); algo=ppo_jax: cpu | gpu (JAX backend)
    torch_threads: int = 1
    # several seeds by one command: one run folder per seed (seed<k>/) under the run's folder; null: one run of `seed`
    seeds: list[int] | None = None


@dataclass
class Config:
    """Root config: ``python train.py algo=ppo day=hectic`` (CGRSP), ``python train.py scenario=hgsp algo=ppo``."""

    algo: Any = MISSING
    # which env is trained: cgrsp (the day and env groups) or hgsp | llm | mig | edge (scenario.env)
    scenario: Any = MISSING
    day: DayConfig = MISSING  # CGRSP only
    env: Any = MISSING  # CGRSP only; schema: gpu_sched_env.cgrsp.config.hydra_schema() (CGRSPEnvConfig's fields)
    train: TrainConfig = MISSING
    seed: int = 0
    resume: bool = False  # continue the latest run of this algo/day/seed (or resume_from)
    resume_from: str | None = None  # run directory to continue
    run_dir: str = "${hydra:runtime.output_dir}"


# The ranges of the algorithms' numeric settings (checked by ``train.validate`` before anything
# is written; SB3 and torch would otherwise fail deep inside a run, or accept a nonsense value
# such as a negative clip range). Each key: the check_number keywords. A key applies to the
# algorithms whose schema has it.
ALGO_RANGES: dict[str, dict] = {
    # PPO: SB3 normalises advantages per minibatch, which needs at least 2 samples
    "n_steps": {"lo": 1, "integer": True},
    "batch_size": {"lo": 2, "integer": True},
    "n_epochs": {"lo": 1, "integer": True},
    "gae_lambda": {"lo": 0.0, "hi": 1.0},
    "clip_range": {"lo": 0.0, "lo_open": True},
    "ent_coef": {"lo": 0.0},
    "vf_coef": {"lo": 0.0},
    "max_grad_norm": {"lo": 0.0, "lo_open": True},
    "bc_episodes": {"lo": 1, "integer": True},
    "bc_epochs": {"lo": 1, "integer": True},
    # DQN
    "buffer_size": {"lo": 1, "integer": True},
    "learning_starts": {"lo": 0, "integer": True},
    "tau": {"lo": 0.0, "hi": 1.0, "lo_open": True},
    "train_freq": {"lo": 1, "integer": True},
    "gradient_steps": {"lo": 1, "integer": True},
    "target_update_interval": {"lo": 1, "integer": True},
    "exploration_fraction": {"lo": 0.0, "hi": 1.0},
    "exploration_initial_eps": {"lo": 0.0, "hi": 1.0},
    "exploration_final_eps": {"lo": 0.0, "hi": 1.0},
}


def register_configs() -> None:
    """Store the schemas (idempotent): ``base_config`` and one per option group."""
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    cs.store(group="algo", name="ppo_schema", node=PPOConfig)
    cs.store(group="algo", name="dqn_schema", node=DQNConfig)
    cs.store(group="algo", name="ppo_jax_schema", node=PPOJaxConfig)
    cs.store(group="day", name="day_schema", node=DayConfig)
    cs.store(group="env", name="env_schema", node=hydra_schema())  # the env's own config object, one home
    cs.store(group="train", name="train_schema", node=TrainConfig)
    cs.store(group="scenario", name="cgrsp_schema", node=CGRSPScenario)
    for spec in SPECS.values():  # each scenario's env settings: its own config object's fields and defaults
        cs.store(group="scenario", name=f"{spec.name}_schema", node=scenario_schema(spec))
