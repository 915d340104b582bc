"""An ``algo=ppo_jax`` config's parts: its hyper-parameters, the JAX envs it trains and selects on, its checks.

Every trainer of a composed config (``train.py``, the benchmarks, the studies) builds from here:
:func:`validate_ppo_jax` refuses a bad setting before anything is written (ConfigError naming
field, value and what is allowed); :func:`build_trainer` is the one caller of
:func:`~gpu_sched_agents.rl.ppo_jax.ppo.make_train`.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig

from gpu_sched_agents.rl.ppo_jax import require_jax
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number

DEVICES = ("cpu", "gpu")


def hyper(cfg: DictConfig) -> Any:
    """:class:`~gpu_sched_agents.rl.ppo_jax.hyper.PPOHyper` of a composed ``algo=ppo_jax`` config."""
    from gpu_sched_agents.rl.ppo_jax.hyper import PPOHyper

    return PPOHyper.of(cfg)


def validate_returns(a: DictConfig, config: CGRSPEnvConfig) -> None:
    """Time-aware returns with the env's shaping (the ranges are ``PPOHyper.check``'s)."""
    if a.tau_s is not None:
        if config.shaping != "none":
            raise ConfigError(
                f"algo.tau_s = {a.tau_s!r} with env.shaping = {config.shaping!r}: the shaping term γ·Φ′ − Φ uses one "
                "γ per step; use env.shaping=none with time-aware returns (algo.tau_s=null keeps the per-decision γ)"
            )


def jax_device(name: str) -> Any:
    """The JAX device for ``train.device`` (ConfigError if ``gpu`` is asked and JAX sees none)."""
    import jax

    check_choice("train.device", name, DEVICES)
    try:
        return jax.devices(name)[0]
    except RuntimeError as e:
        raise ConfigError(
            f"train.device = {name!r}: JAX finds no {name} backend here ({e}); use train.device=cpu, or install jax "
            "with its CUDA plugin"
        ) from e


def validate_ppo_jax(cfg: DictConfig, config: CGRSPEnvConfig) -> None:
    """``algo=ppo_jax``'s checks beyond ``train.validate``'s; raises ConfigError before anything is written."""
    require_jax()
    a, t = cfg.algo, cfg.train
    hyper(cfg).check()  # the update's settings, the rollout and the budget
    check_number("algo.jax_eval_seeds", a.jax_eval_seeds, lo=0, hi=10_000, integer=True)
    check_number("algo.select_days", a.select_days, lo=0, hi=10_000, integer=True)
    if a.select_every is not None:
        if not int(a.select_days):
            raise ConfigError(
                f"algo.select_every = {a.select_every!r} with algo.select_days = 0: it would be ignored; allowed: "
                "algo.select_every=null, or algo.select_days > 0"
            )
        check_number("algo.select_every", a.select_every, lo=1, integer=True)
    _validate_select_regimes(a)
    _validate_select_by(a)
    _validate_recheck(a)
    if int(a.select_days) and not a.jax_eval_rules:
        raise ConfigError(
            f"algo.select_days = {a.select_days} with algo.jax_eval_rules = []: the selection ranks against the "
            "first rule's misses; name a rule, or algo.select_days=0"
        )
    if t.vec_env != "dummy":
        raise ConfigError(
            f"train.vec_env = {t.vec_env!r}: algo=ppo_jax steps its envs vmapped in one process; use "
            "train.vec_env=dummy"
        )
    jax_device(str(t.device))
    from gpu_sched_env.cgrsp.jax import RULES

    for rule in a.jax_eval_rules:
        check_choice("algo.jax_eval_rules[]", rule, RULES)
    validate_returns(a, config)
    _validate_reward_norm(cfg)

    training_env(cfg, config)  # ConfigError listing what the JAX env implements, or naming a bad stock mix entry


def _validate_reward_norm(cfg: DictConfig) -> None:
    """``algo.reward_norm=regime`` only on a mixed env with the reward scaled (the choice is ``PPOHyper.check``'s)."""
    norm = cfg.algo.get("reward_norm", "global")
    if norm != "regime":
        return
    if cfg.day.name != "mixed":
        raise ConfigError(
            f"algo.reward_norm = 'regime' with day = {cfg.day.name!r}: one regime has one scale; allowed: day=mixed "
            "(the generalist's day mix × stock models), or algo.reward_norm=global"
        )
    if not cfg.train.normalize_reward:
        raise ConfigError(
            "algo.reward_norm = 'regime' with train.normalize_reward = false: there is no running scale to split; "
            "allowed: train.normalize_reward=true, or algo.reward_norm=global"
        )


def stock_mix(cfg: DictConfig, config: CGRSPEnvConfig) -> list[str]:
    """``day.stock_mix``, or the env's own stock model as the one entry (``fresh`` or its dwell D [s])."""
    given = cfg.day.get("stock_mix")
    if given is not None:
        return [str(x) for x in given]
    p = config.sim_params()
    return ["fresh" if p.stock_process == "fresh" else f"{p.stock_dwell_s:g}"]


def training_env(cfg: DictConfig, config: CGRSPEnvConfig, **kwargs: Any) -> Any:
    """The JAX env trained on: ``config``'s, or for ``day=mixed`` a mixed env (``day.day_mix`` × the stock mix).

    ``config`` is the evaluation env's (for ``day=mixed`` the hectic day, :func:`~gpu_sched_agents.rl.envs.env_config`);
    the mixed env shares every other setting with it.
    """
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    if cfg.day.name == "mixed":
        from gpu_sched_agents.rl.envs import day_mix
        from gpu_sched_env.cgrsp.jax.mix import regimes_of

        days = day_mix(cfg)
        regimes_of(stock_mix(cfg, config), days, field="day.stock_mix")  # the error names the Hydra field
        return JaxCGRSP.mixed(config, stocks=stock_mix(cfg, config), days=days, **kwargs)
    return JaxCGRSP.from_config(config, **kwargs)


def build_trainer(
    cfg: DictConfig, config: CGRSPEnvConfig, env: Any = None, episode_keys: tuple[str, ...] = ()
) -> tuple[Any, Any, Any]:
    """``(env, hyper-parameters, Trainer)`` of a composed ``algo=ppo_jax`` config: what every trainer of it runs.

    ``env``: the JAX env trained on (default: :func:`training_env` without per-job records);
    ``episode_keys``: the per-episode metrics the update reports (``train.py``'s ``episode/*``). One
    place builds the jitted update (:func:`~gpu_sched_agents.rl.ppo_jax.ppo.make_train`) for
    ``train.py``, the studies' multi-seed training and the benchmarks.
    """
    from gpu_sched_agents.rl.ppo_jax.ppo import make_train

    env = training_env(cfg, config, records=False) if env is None else env
    hp = hyper(cfg)
    return env, hp, make_train(hp, env, env.default_params, episode_keys=episode_keys)


def _validate_select_regimes(a: DictConfig) -> None:
    """``algo.select_regimes``: regime names (:func:`~gpu_sched_env.cgrsp.stock.parse_regime`), each once, with days."""
    from gpu_sched_env.cgrsp.stock import parse_regime

    regimes = list(a.get("select_regimes") or [])
    for i, name in enumerate(regimes):
        try:
            parse_regime(name)
        except ConfigError as e:
            raise ConfigError(f"algo.select_regimes[{i}]: {e}") from None
    if len(set(regimes)) < len(regimes):
        raise ConfigError(f"algo.select_regimes = {regimes}: a regime named twice; allowed: each regime once")
    if regimes and not int(a.select_days):
        raise ConfigError(
            f"algo.select_regimes = {regimes} with algo.select_days = 0: no days to play them on; allowed: "
            "algo.select_days > 0, or algo.select_regimes=[]"
        )


def select_by(a: DictConfig) -> str:
    """The selection's rule: ``algo.select_by``, or by default lexicographic (worst_regime with regimes)."""
    given = a.get("select_by")
    return str(given) if given is not None else "worst_regime" if a.get("select_regimes") else "lexicographic"


def _validate_select_by(a: DictConfig) -> None:
    """``algo.select_by``: a known rule, the one that fits ``algo.select_regimes``, with selection days."""
    from gpu_sched_agents.rl.ppo_jax.selector import SELECT_BY

    given = a.get("select_by")
    if given is None:
        return
    check_choice("algo.select_by", given, SELECT_BY)
    if not int(a.select_days):
        raise ConfigError(
            f"algo.select_by = {given!r} with algo.select_days = 0: there is no selection on JAX days to rank; "
            "allowed: algo.select_days > 0, or algo.select_by=null"
        )
    if (given == "worst_regime") != bool(a.get("select_regimes")):
        raise ConfigError(
            f"algo.select_by = {given!r} with algo.select_regimes = {list(a.get('select_regimes') or [])}: "
            "worst_regime ranks several regimes, the others one; allowed: worst_regime with select_regimes, "
            "lexicographic or objective without"
        )


def _validate_recheck(a: DictConfig) -> None:
    """``algo.recheck_days`` / ``algo.recheck_top``: the second stage of a selection on JAX days (any regimes)."""
    from gpu_sched_agents.rl.ppo_jax.constraint import RECHECK_TOP, check_recheck

    days, top = a.get("recheck_days", 0), a.get("recheck_top", RECHECK_TOP)
    check_number("algo.recheck_days", days, lo=0, integer=True)
    check_number("algo.recheck_top", top, lo=1, integer=True)
    how = None
    if not int(a.select_days):
        how = "algo.select_days = 0 (no selection days: best_model is picked on CGRSP-v0's eval seeds)"
    elif a.get("select_by") == "objective":
        how = "algo.select_by = 'objective' (no rule played: nothing to re-rank against)"
    check_recheck("algo.", int(days), int(top), int(a.select_days), how)


def selection_regimes(cfg: DictConfig, config: CGRSPEnvConfig) -> dict[str, Any] | None:
    """``algo.select_regimes``' JAX envs: the run's design (``config``) on each regime's day and stock model."""
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.cgrsp.stock import regime_config

    names = list(cfg.algo.get("select_regimes") or [])
    return {r: JaxCGRSP.from_config(regime_config(config, r), records=False) for r in names} or None


__all__ = [
    "DEVICES",
    "build_trainer",
    "hyper",
    "jax_device",
    "selection_regimes",
    "stock_mix",
    "training_env",
    "validate_ppo_jax",
    "validate_returns",
]
