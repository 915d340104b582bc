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

Anything else is a :class:`ConfigError` naming what was given and the accepted kinds. A
``module:attr`` object plays behind a guard (:class:`Guard`) that counts its decisions: what it
raises, a ``None`` it returns or an action the simulator or env refuses becomes one
:class:`ConfigError` naming the policy, the day, the seed and the step (:func:`played`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import re
import sys
import zipfile
from collections.abc import Callable
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
    sources: tuple[Path, ...] = ()  # module:attr: the files of the modules it loaded (its code, see fingerprint)

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

    def identity(self) -> dict[str, Any]:
        """What the policy is, whatever the folder it was named from: the owner of its output folder."""
        return identity(self.spec, self.kind, self.model_name)

    def fingerprint(self) -> dict[str, Any]:
        """What decides the policy's days beyond :meth:`describe`: the env config and the model's or code's bytes.

        A model file (zip, npz, a run folder's model): its bytes. A ``module:attr`` object: the bytes
        of every module it loaded from outside the standard library, site-packages and this
        package (:attr:`sources`; this package's code is keyed by
        :func:`gpu_sched_agents.evaluate.protocol.days_key`). A model retrained into the same path,
        or a module or one of its helpers edited in place, gets another fingerprint, so the
        per-scope days a rerun would reuse (``--out``'s ``days/``) are never another policy's.
        """
        files: tuple[Path, ...] = (self.model_path,) if self.model_path is not None else self.sources
        digest = None
        if files:
            h = hashlib.sha1()
            for f in files:  # a model file's digest is the sha1 of its bytes; a module's name is hashed too
                h.update(str(f).encode() if self.kind == "object" else b"")
                h.update(Path(f).read_bytes() if Path(f).is_file() else b"(missing)")
            digest = h.hexdigest()
        out = {"config": json.loads(json.dumps(self.config.as_dict(), default=str)), "sha1": digest}
        if self.kind == "object":
            out["sources"] = [str(f) for f in self.sources]
        return out


def identity(spec: str, kind: str, model: str | None = None) -> dict[str, Any]:
    """A policy's identity: a rule's or module:attr's name, a model file's or run folder's absolute path."""
    out = {"policy": spec if kind in ("rule", "object") else str(Path(spec).resolve())}
    return out | ({"model": model} if model else {})


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
    where = f"; the folder {str(path.parent)!r} does not exist either" if not path.parent.exists() else ""
    expected = {".zip": KINDS["sb3"], ".npz": KINDS["npz"]}.get(path.suffix.lower())
    if expected is not None:
        raise ConfigError(f"POLICY {spec!r}: no such file (expected {expected}){where}")
    if len(path.parts) > 1:
        raise ConfigError(
            f"POLICY {spec!r}: no such file or folder (expected {KINDS['run']}, a model file, a rule name or "
            f"module:attr){where}"
        )
    raise ConfigError(accepted(spec))


def _import_hint(mod_name: str) -> str:
    """Why a module that is not found may still be there: the current folder is not on the import path."""
    top = mod_name.split(".")[0]
    here = [p for p in (Path(*mod_name.split(".")).with_suffix(".py"), Path(top)) if p.exists()]
    if here:
        return (
            f"{str(here[0])!r} is in the current folder, which the gpu-sched command does not search: "
            "run with PYTHONPATH=. or install it"
        )
    return "is it installed, or is its folder on PYTHONPATH?"


def _object(spec: str) -> Policy:
    from gpu_sched_env.core.registry import load_object

    mod_name, attr = spec.split(":")
    try:
        obj = load_object(spec)
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):  # the module itself
            raise ConfigError(
                f"POLICY {spec!r}: module {mod_name!r} does not import (no module named {e.name!r}); "
                f"{_import_hint(mod_name)}"
            ) from None
        raise ConfigError(
            f"POLICY {spec!r}: module {mod_name!r} does not import: it imports {e.name!r}, which is not installed"
        ) from None
    except AttributeError as e:
        if mod_name in sys.modules and not hasattr(sys.modules[mod_name], attr):
            raise ConfigError(f"POLICY {spec!r}: module {mod_name!r} has no attribute {attr!r}") from None
        raise ConfigError(f"POLICY {spec!r}: module {mod_name!r} does not import: {_exc(e)}") from None
    except Exception as e:  # what the module's own code raises when imported (a SyntaxError included)
        raise ConfigError(f"POLICY {spec!r}: module {mod_name!r} does not import: {_exc(e)}") from None
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as e:
            raise ConfigError(
                f"POLICY {spec!r}: {attr}() raised {_exc(e)} (a class is instantiated without arguments)"
            ) from None
    simulated = not callable(getattr(obj, "predict", None))
    if simulated and not (callable(getattr(obj, "reset", None)) and callable(getattr(obj, "decide", None))):
        raise ConfigError(
            f"POLICY {spec!r}: {type(obj).__name__} follows neither policy protocol: the simulator's, "
            "reset(view, rng) and decide(view) (what simulate() plays), nor SB3's, predict(obs, state=None, "
            "episode_start=None, deterministic=True) (SB3 models, HeuristicAgent)"
        )
    if simulated:
        for meth, args in (("reset", "(view, rng)"), ("decide", "(view)")):
            try:
                inspect.signature(getattr(obj, meth)).bind(*([None] * (args.count(",") + 1)))
            except TypeError as e:
                raise ConfigError(f"POLICY {spec!r}: {type(obj).__name__}.{meth} must take {args}: {e}") from None
            except ValueError:  # no signature to read (a builtin): it is called as it is
                pass
    config = as_env_config(getattr(obj, "env_config", None))
    label = str(getattr(obj, "name", None) or attr)
    guard = SimulatorGuard(obj, label) if simulated else PredictGuard(obj)
    return Policy(spec, "object", label, config, model=guard, simulated=simulated, sources=outside_sources())


def outside_sources() -> tuple[Path, ...]:
    """The files of every loaded module outside the standard library, site-packages and this package.

    What a ``module:attr`` policy brings of its own: its module and every helper it imported
    (walked in :data:`sys.modules` after its import). This package's own code is keyed apart
    (:data:`gpu_sched_agents.evaluate.protocol.DAYS_SOURCES`).
    """
    import site
    import sysconfig

    from gpu_sched_env.core import store

    skip = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    skip |= {*site.getsitepackages(), site.getusersitepackages(), sys.base_prefix + "/lib", sys.prefix + "/lib"}
    if sys.prefix != sys.base_prefix:  # a virtual environment: everything in it was installed there
        skip.add(sys.prefix)
    roots = [Path(p).resolve() for p in skip if p]
    roots += [Path(store.__file__).resolve().parents[1], Path(__file__).resolve().parents[1]]  # the two packages
    files = set()
    for name, mod in list(sys.modules.items()):
        if name == "__main__":  # the program that runs (gpu-sched, python -m …, pytest), not the policy
            continue
        f = getattr(mod, "__file__", None)
        if not isinstance(f, str) or not f:
            continue
        p = Path(f).resolve()
        if p.is_file() and not any(p.is_relative_to(r) for r in roots):
            files.add(p)
    return tuple(sorted(files))


def _exc(e: BaseException) -> str:
    """``Type: message`` on one line, at most 300 characters."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:300]}{'…' if len(text) > 300 else ''}" if text else type(e).__name__


def _shown(x: Any) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= 120 else text[:117] + "…"


class PolicyError(ConfigError):
    """A ``module:attr`` policy raised, or returned what cannot be played (the guard's words, without where)."""


class Guard:
    """A ``module:attr`` object as it plays: every attribute is the object's; its decisions are counted."""

    what = ""  # the call that decides: decide(view) or predict(obs, …)
    allowed = ""  # what that call may return

    def __init__(self, obj: Any) -> None:
        self.obj, self.steps, self.last = obj, 0, None

    def __getattr__(self, name: str) -> Any:
        if name == "obj":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.obj, name)

    def _call(self, fn: Callable[..., Any], what: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise PolicyError(f"{what} raised {_exc(e)}") from e


class SimulatorGuard(Guard):
    """An object of the simulator's protocol: ``reset(view, rng)``, then ``decide(view)`` at each decision."""

    what = "decide(view)"
    allowed = "an iterable of (job, slot) pairs, each a waiting job (view.waiting) and an idle slot, [] for none"

    def __init__(self, obj: Any, label: str) -> None:
        super().__init__(obj)
        self.name = str(getattr(obj, "name", None) or label)

    def reset(self, view: Any, rng: Any) -> None:
        """The object's reset."""
        self.steps, self.last = 0, None
        self._call(self.obj.reset, "reset(view, rng)", view, rng)

    def decide(self, view: Any) -> Any:
        """The object's decision, refused when it is None."""
        self.steps += 1
        out = self._call(self.obj.decide, self.what, view)
        if out is None:
            raise PolicyError(f"{self.what} returned None; allowed: {self.allowed}")
        self.last = out
        return out


class PredictGuard(Guard):
    """An object of SB3's protocol: ``predict(obs, state, episode_start, deterministic)`` → ``(action, state)``.

    Its ``predict`` has the object's signature (``run_episode`` passes ``action_masks`` when the
    object's own predict takes them).
    """

    what = "predict(obs, …)"
    allowed = "a pair (action, state), the action one that obs['action_mask'] allows"

    def __init__(self, obj: Any) -> None:
        super().__init__(obj)
        inner = obj.predict

        @functools.wraps(inner)
        def predict(*args: Any, **kwargs: Any) -> Any:
            self.steps += 1
            out = self._call(inner, self.what, *args, **kwargs)
            if out is None:
                raise PolicyError(f"{self.what} returned None; allowed: {self.allowed}")
            self.last = out
            return out

        self.predict = predict


def played(pol: Policy, day: str, seed: int, play: Callable[[], Any]) -> Any:
    """``play()``: one day of ``pol`` on ``day``, seed ``seed``; a ``module:attr`` policy's fault as one ConfigError.

    The error names the policy, the day, the seed and the step, and what it raised or returned
    and what is allowed. Anything of another policy kind passes unchanged.
    """
    guard = pol.model
    if not isinstance(guard, Guard):
        return play()
    guard.steps, guard.last = 0, None
    where = f"POLICY {pol.spec!r} on {day}, seed {seed}"
    try:
        return play()
    except PolicyError as e:
        raise ConfigError(f"{where}, step {guard.steps}: {e}") from None
    except Exception as e:
        if guard.steps == 0:  # before its first decision: not the policy's
            raise
        judge = "the simulator" if pol.simulated else "the env"
        raise ConfigError(
            f"{where}, step {guard.steps}: {guard.what} returned {_shown(guard.last)}, which {judge} refused "
            f"({_exc(e)}); allowed: {guard.allowed}"
        ) from None


def _run_folder(path: Path, load: bool, model: str | None = None) -> Policy:
    with needs_extra(f"POLICY {str(path)!r} (a train.py run folder)"):
        from omegaconf import OmegaConf

        from gpu_sched_agents.rl.envs import env_config

    cfg_path = path / "config.yaml"
    if not cfg_path.is_file():
        raise ConfigError(
            f"POLICY {str(path)!r}: a folder without config.yaml, not a run folder of train.py. {accepted(str(path))}"
        )
    from omegaconf.errors import OmegaConfBaseException

    try:
        cfg = OmegaConf.load(cfg_path)
        scenario = cfg.get("scenario")
        scenario = "cgrsp" if scenario is None else str(scenario.get("name"))
        algo = str(cfg.algo.name)
    except (OmegaConfBaseException, AttributeError, ValueError, OSError) as e:  # yaml's errors are ValueErrors
        raise ConfigError(f"POLICY {str(path)!r}: config.yaml is not a train.py run's config ({_exc(e)})") from None
    if scenario != "cgrsp":
        raise ConfigError(
            f"POLICY {str(path)!r}: a train.py run of scenario={scenario}, not of CGRSP-v0: gpu-sched evaluate "
            "scores CGRSP policies (the run's own final_eval judges it against its scenario's heuristics)"
        )
    names = (model,) if model else ("best_model.zip", "best_model.npz", "final_model.zip", "final_model.npz")
    found = [path / n for n in names if (path / n).is_file()]
    if not found:
        there = sorted(p.name for p in path.iterdir() if p.suffix in (".zip", ".npz"))
        raise ConfigError(
            f"POLICY {str(path)!r}: no model {' or '.join(names)} in this run folder; models there: {there}"
        )
    label = f"{algo} ({path.name}{'' if model is None else ', ' + Path(model).stem})"
    try:
        config = env_config(cfg)
    except OmegaConfBaseException as e:
        raise ConfigError(f"POLICY {str(path)!r}: config.yaml has no CGRSP env settings ({_exc(e)})") from None
    pol = Policy(str(path), "run", label, config, algo, found[0], model_name=model)
    return _load(pol) if load else pol


def sb3_algo(path: Path) -> str:
    """The registry name of the algorithm that saved the SB3 zip ``path`` (ConfigError if it is not one)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise ConfigError(f"POLICY {str(path)!r}: not a Stable-Baselines3 model file ({e})") from None
    # SB3 keeps a readable copy of each space beside its pickle: no unpickling to tell the env
    obs = data.get("observation_space", {}) if isinstance(data, dict) else {}
    kind = str(obs.get(":type:", "")) if isinstance(obs, dict) else ""
    if kind and "spaces.dict.Dict" not in kind:  # every CGRSP-v0 design observes a Dict (action_mask, jobs, …)
        made_on = re.search(r"bound method (\w+)\.", json.dumps(data.get("action_space", {})))
        space = kind.rsplit(".", 1)[-1].rstrip("'>")
        shape = obs.get("_shape", "")
        raise ConfigError(
            f"POLICY {str(path)!r}: an SB3 model of another env ({made_on.group(1) if made_on else 'not CGRSP-v0'}, "
            f"observation space {space} {shape}), not of CGRSP-v0 (a Dict observation): gpu-sched evaluate scores "
            "CGRSP policies"
        )
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
        rows = [
            played(pol, day, int(s), lambda s=s: simulate(pol.model, day=day, seed=int(s), **params).summary())
            for s in seeds
        ]
    elif pol.kind == "object" or workers <= 1:
        _CACHE.setdefault(f"{pol.spec}|{pol.model_name}", pol)
        rows = [
            played(pol, day, int(s), lambda s=s: learned_day(pol.spec, pol.model_name, day, stock, s)) for s in seeds
        ]
    else:
        cells = [{"spec": pol.spec, "model": pol.model_name, "day": day, "stock": stock, "seed": int(s)} for s in seeds]
        rows = map_cells(learned_day, cells, executor="process", workers=workers, progress=False)
    return pd.DataFrame(rows).assign(seed=[int(s) for s in seeds])


__all__ = [
    "KINDS",
    "Guard",
    "Policy",
    "PolicyError",
    "accepted",
    "env_for",
    "identity",
    "learned_days",
    "outside_sources",
    "played",
    "resolve",
    "rule_names",
    "sb3_algo",
]
