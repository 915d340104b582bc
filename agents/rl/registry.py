"""Algorithm registry: name → how to build, load and drive the learner (no if/elif chains).

The SB3 classes are named by ``"module:attr"`` and imported when a spec's ``cls`` or ``policy``
is read, so looking an algorithm up (``get_algo``) or loading an exported ``ppo_jax`` policy
imports neither SB3 nor PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.core.extras import needs_extra
from gpu_sched_env.core.registry import load_object

with needs_extra("gpu_sched_agents.rl (the learners: training, loading a model)"):
    from omegaconf import DictConfig, OmegaConf

if TYPE_CHECKING:
    from stable_baselines3.common.base_class import BaseAlgorithm

# Config fields that are not keyword arguments of the SB3 constructor.
_NOT_SB3 = {
    "name",
    "net_arch",
    "bc_teacher",
    "bc_episodes",
    "bc_epochs",
    "time_halflife_s",
    "lr_final_frac",
    "features",
    "place_first",
}


def _sb3_kwargs(a: Any) -> dict[str, Any]:
    """Constructor kwargs from an algorithm config (every field but the project's own)."""
    cfg = OmegaConf.to_container(a, resolve=True) if isinstance(a, DictConfig) else dict(vars(a))
    out = {k: v for k, v in cfg.items() if k not in _NOT_SB3}
    out["policy_kwargs"] = {"net_arch": list(cfg["net_arch"])}
    frac = cfg.get("lr_final_frac", 1.0)
    if frac != 1.0:  # SB3's own schedule: learning_rate at the start, × frac at the end of training
        from stable_baselines3.common.utils import LinearSchedule

        lr = float(cfg["learning_rate"])
        out["learning_rate"] = LinearSchedule(lr, lr * float(frac), end_fraction=1.0)
    if cfg.get("time_halflife_s"):  # semi-MDP discounting (gpu_sched_agents.rl.smdp), PPO only
        from gpu_sched_agents.rl.smdp import TimeDiscountedBuffer

        out["rollout_buffer_class"] = TimeDiscountedBuffer
        out["rollout_buffer_kwargs"] = {"halflife_s": float(cfg["time_halflife_s"])}
    return out


@dataclass(frozen=True)
class AlgoSpec:
    """How one algorithm is built and used.

    An SB3 algorithm gives ``sb3`` (its class as ``"module:attr"``), ``policy_ref`` (a policy
    class as ``"module:attr"``, or a name SB3 knows such as ``"MultiInputPolicy"``) and
    ``kwargs``; :attr:`cls` and :attr:`policy` import them. One with a training loop of its own
    (``ppo_jax``) gives ``trainer(cfg, env_config, run_dir, checkpoint) -> final means``,
    ``validate(cfg, env_config)`` (extra checks, before anything is written) and ``load(path)``;
    ``seeds_trainer(runs, env_config) -> [final means]`` trains several seeds' runs (config, run
    folder, checkpoint) side by side (``train.seeds``; without it the seeds train one after another).
    """

    sb3: str | None
    policy_ref: str | None
    kwargs: Callable[[Any], dict[str, Any]] | None
    masked_env: bool  # True: the env raises on illegal actions and the learner masks them
    save_replay_buffer: bool = False
    trainer: Callable[..., dict[str, float]] | None = None
    validate: Callable[[Any, Any], None] | None = None
    load: Callable[[Any], Any] | None = None
    seeds_trainer: Callable[..., list[dict[str, float]]] | None = None

    @property
    def cls(self) -> type[BaseAlgorithm] | None:
        """The SB3 algorithm class (imported here), None for an algorithm with its own loop."""
        if self.sb3 is None:
            return None
        with needs_extra(f"the SB3 learner {self.sb3}"):
            return load_object(self.sb3)

    @property
    def policy(self) -> Any:
        """The policy class (imported here), or the name SB3 resolves itself."""
        ref = self.policy_ref
        if ref is None or ":" not in ref:
            return ref
        with needs_extra(f"the SB3 policy {ref}"):
            return load_object(ref)


def _ppo_jax(name: str, module: str = "run") -> Callable[..., Any]:
    """A function of gpu_sched_agents.rl.ppo_jax.<module>, resolved when called (JAX is optional).

    Named by string through the one plug-in loader (``load_object``), as the simulators find
    policies: the runner uses the shared run machinery (``rl.train``), which looks algorithms up
    here, so an import of the runner from this module would close a circle.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return load_object(f"gpu_sched_agents.rl.ppo_jax.{module}:{name}")(*args, **kwargs)

    return call


ALGOS: dict[str, AlgoSpec] = {
    "ppo": AlgoSpec(
        "sb3_contrib:MaskablePPO", "gpu_sched_agents.rl.policies:FactoredMaskablePolicy", _sb3_kwargs, masked_env=True
    ),
    "ppo_unmasked": AlgoSpec("stable_baselines3:PPO", "MultiInputPolicy", _sb3_kwargs, masked_env=False),
    "dqn": AlgoSpec(
        "gpu_sched_agents.rl.masked_dqn:MaskedDQN",
        "gpu_sched_agents.rl.masked_dqn:MaskedDQNPolicy",
        _sb3_kwargs,
        masked_env=True,
        save_replay_buffer=True,
    ),
    "ppo_jax": AlgoSpec(
        None,
        None,
        None,
        masked_env=True,
        trainer=_ppo_jax("train_ppo_jax"),
        seeds_trainer=_ppo_jax("train_ppo_jax_seeds"),
        validate=_ppo_jax("validate_ppo_jax", "config"),
        load=_ppo_jax("load_policy", "export"),  # NumPy: loading needs neither JAX nor PyTorch
    ),
}


def get_algo(name: str) -> AlgoSpec:
    """The spec for ``name`` (ConfigError listing the names otherwise)."""
    check_choice("algo.name", name, ALGOS)
    return ALGOS[name]


def load_model(name: str, path: Any, **kwargs: Any) -> BaseAlgorithm:
    """Load a saved model of algorithm ``name``, resolving its classes from this registry.

    The policy class is given explicitly instead of being unpickled by module path, so a
    model saved before a module moved (the package's installed name ``agents`` became
    ``gpu_sched_agents``) still loads.
    """
    spec = get_algo(name)
    if spec.load is not None:  # not an SB3 model (ppo_jax: an exported NumPy policy)
        return spec.load(path)
    assert spec.cls is not None
    custom = {} if isinstance(spec.policy, str) else {"policy_class": spec.policy}
    return spec.cls.load(path, custom_objects={**custom, **kwargs.pop("custom_objects", {})}, **kwargs)
