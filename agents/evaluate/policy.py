"""POLICY, as given on the command line, resolved to something that plays CGRSP days.

Five kinds are accepted (:data:`KINDS`), checked in this order:

* ``module:attr`` (the left side a dotted module name; a class is instantiated without
  arguments): an object of either protocol. The simulator's (:mod:`gpu_sched_env.core.policy`,
  what ``simulate()`` takes): ``reset(view, rng)`` and ``decide(view)``, played by the simulator
  like a rule. Or SB3's: ``predict(obs, state=None, episode_start=None, deterministic=True)`` on
  CGRSP-v0; it plays its ``env_config`` attribute (a
  :class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig` or its keywords) or the default env, and
  ``bind(env)`` is called when it has one. An object with both is played through ``predict``.
* a rule or heuristic name: the published heuristics (``POLICY_NAMES``), the deferring rules
  (``EXTENSIONS``) and the rollout planner (``PLANNERS``), played by the simulator directly.
* a run folder of ``train.py`` (holds ``config.yaml``): its ``best_model.{zip,npz}``, else its
  ``final_model.{zip,npz}`` (as ``final_eval`` picks), in the run's own env config.
* an SB3 model (``.zip``, MaskablePPO, DQN or plain PPO of this project) in the default env design.
* an exported ``algo=ppo_jax`` policy (``.npz``): a two-action actor in the when design (``algo=ppo_jax``'s
  default), any other in experiment=joint_heads' design (``experiment=ppo_jax_joint``).

Anything else is a :class:`ConfigError` naming what was given and the accepted kinds.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig, as_env_config
from gpu_sched_env.cgrsp.stock import with_stock
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.extras import MissingExtraError, needs_extra

KINDS = {
    "rule": "a rule or heuristic name",
    "run": "a train.py run folder (holds config.yaml)",
    "sb3": "an SB3 model file (.zip)",
    "npz": "an exported ppo_jax policy (.npz)",
    "object": "module:attr (an object with reset(view, rng) and decide(view), or with predict(obs, state, "
    "episode_start, deterministic))",
}
_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def rule_names() -> tuple[str, ...]:
    """Every rule and heuristic the simulator plays by name."""
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS, PLANNERS
    from gpu_sched_env.cgrsp import POLICY_NAMES

    return (*POLICY_NAMES, *EXTENSIONS, *PLANNERS)


def accepted(given: str) -> str:
    """The error text for a POLICY that is none of the kinds."""
    return (
        f"POLICY {given!r} is none of the accepted kinds: {'; '.join(KINDS.values())}. "
        f"Rules and heuristics: {', '.join(rule_names())}"
    )


@dataclass
class Policy:
    """A resolved POLICY: what it is, the env config it plays and (learned ones) its loaded model."""

    spec: str  # as given; worker processes resolve it again
    kind: str  # a key of KINDS
    label: str
    config: CGRSPEnvConfig
    algo: str | None = None
    model_path: Path | None = None
    masked: bool = True
    model: Any = field(default=None, repr=False)
    model_name: str | None = None  # --model: the file inside a run folder
    simulated: bool = False  # a module:attr object of the simulator's protocol (reset/decide), not predict

    @property
    def jax(self) -> bool:
        """Judged in JAX too (an exported ppo_jax policy)."""
        return self.algo == "ppo_jax"

    def params(self, stock: dict[str, Any]) -> dict[str, Any]:
        """The policy's simulator parameters under another stock model (the rules and bounds get the same)."""
        return with_stock(self.config.params, stock)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description (report.json's ``policy``)."""
        return {
            "spec": self.spec,
            "kind": self.kind,
            "label": self.label,
            "algo": self.algo,
            "model": None if self.model_path is None else str(self.model_path),
        }

    def fingerprint(self) -> dict[str, Any]:
        """What decides the policy's days beyond :meth:`describe`: the env config and the model's or module's bytes.

        A model retrained into the same path, or a module edited in place, gets another fingerprint,
        so the per-scope days a rerun would reuse (``--out``'s ``days/``) are never another policy's.
        """
        import hashlib

        source = self.model_path
        if source is None and self.kind == "object":
            source = getattr(sys.modules.get(self.spec.split(":")[0]), "__file__", None)
        digest = None
        if source is not None and Path(source).is_file():
            digest = hashlib.sha1(Path(source).read_bytes()).hexdigest()
        return {"config": json.loads(json.dumps(self.config.as_dict(), default=str)), "sha1": digest}


def resolve(spec: str, load: bool = True, model: str | None = None) -> Policy:
    """The :class:`Policy` of ``spec`` (ConfigError naming ``spec`` and the accepted kinds otherwise).

    ``model``: the model file inside a run folder (default: best, else final).
    """
    spec = str(spec)
    path = Path(spec)
    if model is not None and not path.is_dir():
        raise ConfigError(f"--model {model!r}: only for a run folder; POLICY {spec!r} is not one")
    if _MODULE_ATTR.match(spec) and not path.exists():
        return _object(spec)
    if spec in rule_names():
        return Policy(spec, "rule", spec, CGRSPEnvConfig(day="hectic"))
    if path.is_dir():
        return _run_folder(path, load, model)
    if path.is_file() and path.suffix == ".zip":
        return _sb3(path, load)
    if path.is_file() and path.suffix == ".npz":
        return _npz(path, load)
    if path.exists():
        raise ConfigError(f"POLICY {spec!r}: a file that is neither .zip (SB3) nor .npz (ppo_jax). {accepted(spec)}")
    raise ConfigError(accepted(spec))


def _object(spec: str) -> Policy:
    from gpu_sched_env.core.registry import load_object

    mod_name, attr = spec.split(":")
    try:
        obj = load_object(spec)
    except ImportError as e:
        raise ConfigError(f"POLICY {spec!r}: module {mod_name!r} does not import ({e}). {accepted(spec)}") from None
    except AttributeError:
        raise ConfigError(f"POLICY {spec!r}: module {mod_name!r} has no attribute {attr!r}") from None
    if isinstance(obj, type):
        obj = obj()
    simulated = not callable(getattr(obj, "predict", None))
    if simulated and not (callable(getattr(obj, "reset", None)) and callable(getattr(obj, "decide", None))):
        raise ConfigError(
            f"POLICY {spec!r}: {type(obj).__name__} follows neither policy protocol: the simulator's, "
            "reset(view, rng) and decide(view) (what simulate() plays), nor SB3's, predict(obs, state=None, "
            "episode_start=None, deterministic=True) (SB3 models, HeuristicAgent)"
        )
    config = as_env_config(getattr(obj, "env_config", None))
    label = str(getattr(obj, "name", None) or attr)
    return Policy(spec, "object", label, config, model=obj, simulated=simulated)


def _run_folder(path: Path, load: bool, model: str | None = None) -> Policy:
    with needs_extra(f"POLICY {str(path)!r} (a train.py run folder)"):
        from omegaconf import OmegaConf

        from gpu_sched_agents.rl.envs import env_config

    cfg_path = path / "config.yaml"
    if not cfg_path.is_file():
        raise ConfigError(
            f"POLICY {str(path)!r}: a folder without config.yaml, not a run folder of train.py. {accepted(str(path))}"
        )
    cfg = OmegaConf.load(cfg_path)
    algo = str(cfg.algo.name)
    names = (model,) if model else ("best_model.zip", "best_model.npz", "final_model.zip", "final_model.npz")
    found = [path / n for n in names if (path / n).is_file()]
    if not found:
        there = sorted(p.name for p in path.iterdir() if p.suffix in (".zip", ".npz"))
        raise ConfigError(
            f"POLICY {str(path)!r}: no model {' or '.join(names)} in this run folder; models there: {there}"
        )
    label = f"{algo} ({path.name}{'' if model is None else ', ' + Path(model).stem})"
    pol = Policy(str(path), "run", label, env_config(cfg), algo, found[0], model_name=model)
    return _load(pol) if load else pol


def sb3_algo(path: Path) -> str:
    """The registry name of the algorithm that saved the SB3 zip ``path`` (ConfigError if it is not one)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise ConfigError(f"POLICY {str(path)!r}: not a Stable-Baselines3 model file ({e})") from None
    # the policy class's readable fields name its methods ("FactoredMaskablePolicy.__init__ ..."): no unpickling
    text = json.dumps(data.get("policy_class", {})) if isinstance(data, dict) else ""
    if "FactoredMaskablePolicy" in text or "MaskableMultiInputActorCriticPolicy" in text:
        return "ppo"
    if "MaskedDQNPolicy" in text:
        return "dqn"
    if "ActorCriticPolicy" in text or "MultiInputPolicy" in text:
        return "ppo_unmasked"
    raise ConfigError(f"POLICY {str(path)!r}: an SB3 file of an unknown policy class; this env's learners: ppo, dqn")


def _sb3(path: Path, load: bool) -> Policy:
    algo = sb3_algo(path)
    pol = Policy(str(path), "sb3", f"{algo} ({path.stem})", CGRSPEnvConfig(day="hectic"), algo, path)
    return _load(pol) if load else pol


def _npz(path: Path, load: bool) -> Policy:
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config

    config = joint_heads_config("hectic")
    try:
        n_actions = NumpyPolicy.load(path).n_actions
    except Exception:  # not a loadable export: _load says so, naming the file
        n_actions = None
    if n_actions == 2:  # an actor of the when design (learned timing on the rule's order)
        config = config.replace(action_mode="when")
    pol = Policy(str(path), "npz", f"ppo_jax ({path.stem})", config, "ppo_jax", path)
    return _load(pol) if load else pol


def _load(pol: Policy) -> Policy:
    """Load the model of ``pol`` and check it plays ``pol.config``'s env (ConfigError otherwise)."""
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    try:
        with needs_extra(f"POLICY {pol.spec!r} (a {pol.algo} model)"):
            pol.masked, pol.model = _loaded(str(pol.algo), pol.model_path)
    except MissingExtraError:
        raise  # an install to make, not a bad model file
    except ConfigError as e:
        raise ConfigError(f"POLICY {pol.spec!r}: {e}") from None
    except Exception as e:  # SB3 raises what torch/zipfile/pickle raise; say what failed
        raise ConfigError(f"POLICY {pol.spec!r}: {pol.model_path} does not load as {pol.algo} ({e})") from None
    env = CGRSPEnv(pol.config)
    try:
        if hasattr(pol.model, "bind"):  # the exported ppo_jax policy checks its observation width
            pol.model.bind(env)
        elif pol.model.observation_space != env.observation_space or pol.model.action_space != env.action_space:
            raise ConfigError(
                f"its observation/action spaces are not those of CGRSP-v0 with {_design(pol.config)}; "
                "pass its run folder (config.yaml says the design)"
            )
    except ConfigError as e:
        raise ConfigError(f"POLICY {pol.spec!r} is not a model of this env: {e}") from None
    finally:
        env.close()
    return pol


def _loaded(algo: str, path: Path | None) -> tuple[bool, Any]:
    """``(masked, model)`` through the algorithm registry (an exported ppo_jax policy: NumPy, no PyTorch imported)."""
    from gpu_sched_agents.rl.registry import get_algo, load_model

    spec = get_algo(algo)
    return spec.masked_env, load_model(algo, path, **({} if spec.load else {"device": "cpu"}))


def _design(config: CGRSPEnvConfig) -> str:
    keys = ("window", "window_by", "order", "features", "action_mode")
    return ", ".join(f"{k}={getattr(config, k)!r}" for k in keys if hasattr(config, k))


def env_for(pol: Policy, day: str, stock: dict[str, Any]) -> CGRSPEnvConfig:
    """The policy's env config on ``day`` under the stock model ``stock`` (and no other).

    Its params are set whole: ``CGRSPEnvConfig.replace`` merges params into the old ones, which
    kept a run trained under Markov stock on Markov stock in the fresh-stock scopes.
    """
    return dataclasses.replace(pol.config.replace(day=day), params=pol.params(stock))


_CACHE: dict[str, Policy] = {}
# A worker process costs about as much to start (imports, the policy loaded again) as four learned
# hectic days; fewer days than this per worker are played in this process (--quick: 5 days, serial).
DAYS_PER_WORKER = 4


def learned_day(spec: str, model: str | None, day: str, stock: dict[str, Any], seed: int) -> dict[str, Any]:
    """One CGRSP-v0 day of a learned policy (top-level: process pools pickle it; the policy is cached per process)."""
    from gpu_sched_agents.rl.envs import evaluate_model

    key = f"{spec}|{model}"
    if key not in _CACHE:
        _CACHE[key] = resolve(spec, model=model)
    pol = _CACHE[key]
    if "torch" in sys.modules:  # an SB3 model: one thread per worker process, oversubscribed cores crawl
        sys.modules["torch"].set_num_threads(1)
    return evaluate_model(pol.model, env_for(pol, day, stock), [int(seed)], pol.masked).iloc[0].to_dict()


def learned_days(pol: Policy, day: str, stock: dict[str, Any], seeds: list[int], workers: int) -> pd.DataFrame:
    """Per-seed summaries of a learned policy, in this process or in worker processes.

    Up to ``workers`` processes of at least :data:`DAYS_PER_WORKER` days each; module:attr objects
    always play in this one (the simulator's protocol through ``simulate()``, SB3's on CGRSP-v0).
    """
    from gpu_sched_env.core.fanout import map_cells

    workers = min(workers, len(seeds) // DAYS_PER_WORKER)
    if pol.simulated:  # the simulator plays it, as it plays a rule (reset once per day)
        from gpu_sched_env.cgrsp.api import simulate

        params = pol.params(stock)
        rows = [simulate(pol.model, day=day, seed=int(s), **params).summary() for s in seeds]
    elif pol.kind == "object" or workers <= 1:
        _CACHE.setdefault(f"{pol.spec}|{pol.model_name}", pol)
        rows = [learned_day(pol.spec, pol.model_name, day, stock, s) for s in seeds]
    else:
        cells = [{"spec": pol.spec, "model": pol.model_name, "day": day, "stock": stock, "seed": int(s)} for s in seeds]
        rows = map_cells(learned_day, cells, executor="process", workers=workers, progress=False)
    return pd.DataFrame(rows).assign(seed=[int(s) for s in seeds])


__all__ = ["KINDS", "Policy", "accepted", "env_for", "learned_days", "resolve", "rule_names", "sb3_algo"]
