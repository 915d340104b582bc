"""The protocol of ``gpu-sched evaluate --scenario S POLICY`` for every scenario row but CGRSP's.

    gpu-sched evaluate --scenario hgsp sagreedy                   # the standard protocol, runs/evaluate/hgsp/<label>
    gpu-sched evaluate --scenario mig my_pkg.rules:Mine --quick   # one regime, 5 seeds
    gpu-sched evaluate --scenario llm runs/train/<run> --seeds 20 --executor serial

What is played (:class:`BenchProtocol`): for each regime of the scenario's row
(:mod:`gpu_sched_agents.evaluate.scenarios`) the instances of test seeds 20 000 .. 20 000 + n − 1 (selection
seeds are 10 000 .., training ≥ 2^20); on each instance every rule of the row (the scenario's registry less
the names the row excludes, read now), the policy and the bound hook (an ``exact`` regime asks the exact
solver with the row's limit, the others its relaxation: ``time_limit_s = 0``). One cell per (regime, seed),
fanned out through :func:`gpu_sched_env.core.fanout.map_cells` (``serial``, ``process`` or ``ray``: the same
numbers, each cell's randomness is its seed's). Per regime (:func:`judge`): the best rule (the lowest mean
objective, :func:`gpu_sched_env.core.criteria.best_rule`), the policy's paired difference to it with its 95 %
CI, the paired t and Wilcoxon tests Holm-adjusted over every regime × judged metric, the verdict and parity
of :mod:`gpu_sched_env.core.criteria`, and the gap to the bound (mean % and CI, with how many instances had a
proved optimum and how many a lower bound only).

POLICY: a registered rule of the scenario, ``module:attr`` (an object with the scenario's ``reset``/``decide``
protocol, or an edge planner's ``plan``), an SB3 ``.zip`` or a ``train.py scenario=S`` run folder (its best
model, else its final one), played on the scenario's env on the same instance.
"""

from __future__ import annotations

import json
import re
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.evaluate.scenarios import Benchmark, benchmark, no_bound_reason
from gpu_sched_env.core import criteria
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.stats import ALPHA, compare_pairs, mean_ci

SEED0 = 20_000  # test seeds (the CGRSP protocol's too)
POLICY = "__policy__"
BOUND = "__bound__"
_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class BenchProtocol:
    """What is played: the scenario, its regimes and the test seeds per regime."""

    name: str
    scenario: str
    seeds: int
    regimes: tuple[str, ...]

    def check(self) -> BenchProtocol:
        """Raise ConfigError naming the first bad field."""
        row = benchmark(self.scenario)
        if not self.regimes:
            raise ConfigError(f"--regimes: no regime given; allowed: {', '.join(row.regime_names)}")
        for r in self.regimes:
            row.regime(r)
        if self.seeds < 2:
            raise ConfigError(f"--seeds = {self.seeds}: need at least 2 for confidence intervals and paired tests")
        if SEED0 + self.seeds > 30_000:
            raise ConfigError(f"--seeds = {self.seeds}: test seeds end at 29 999; allowed: 2 .. {30_000 - SEED0}")
        return self

    def describe(self) -> dict[str, Any]:
        """JSON-ready (report.json's ``protocol``)."""
        row = benchmark(self.scenario)
        return {
            **asdict(self),
            "month_reps": 0,
            "seed0": SEED0,
            "regime_params": {r: dict(row.regime(r).params) for r in self.regimes},
            "exact_regimes": [r for r in self.regimes if row.regime(r).exact],
            "objective": row.objective,
            "unit": row.unit,
            "guard": row.guard,
            "rules": list(row.rule_names()),
            "excluded": row.excluded_now(),
            "bound": no_bound_reason(row) or row.bound_module + ".bound",
            "bound_limit_s": row.bound_limit_s,
            "ci": "95 % Student t interval over the instances",
            "tests": "paired t and Wilcoxon signed-rank, policy − best rule, Holm over every regime × judged metric",
        }


def protocol(scenario: str, quick: bool, seeds: int | None, regimes: tuple[str, ...] | None) -> BenchProtocol:
    """The standard or quick protocol of ``scenario``, with any field overridden (then named custom)."""
    row = benchmark(scenario)
    base = (
        BenchProtocol("quick", scenario, row.quick[1], (row.quick[0],))
        if quick
        else BenchProtocol("standard", scenario, row.seeds, row.regime_names)
    )
    over = {k: v for k, v in (("seeds", seeds), ("regimes", regimes)) if v is not None and v != getattr(base, k)}
    return BenchProtocol(**{**asdict(base), **over, "name": "custom" if over else base.name}).check()


# ---- the policy ---------------------------------------------------------------------------------------------
@dataclass
class BenchPolicy:
    """A POLICY resolved for one scenario: a rule, a ``module:attr`` object or a learned model (sb3 / run)."""

    spec: str
    kind: str
    label: str
    scenario: str
    model_path: Path | None = None
    sources: tuple[Path, ...] = ()
    model: Any = field(default=None, repr=False)

    def describe(self) -> dict[str, Any]:
        """JSON-ready (report.json's ``policy``)."""
        m = None if self.model_path is None else str(self.model_path)
        return {"spec": self.spec, "kind": self.kind, "label": self.label, "algo": None, "model": m}

    def identity(self) -> dict[str, Any]:
        """The owner of its output folder."""
        pol = self.spec if self.kind in ("rule", "object") else str(Path(self.spec).resolve())
        return {"policy": pol, "scenario": self.scenario}

    def fingerprint(self) -> str | None:
        """The sha1 of the model's bytes, or of the modules a ``module:attr`` object brought."""
        import hashlib

        files = (self.model_path,) if self.model_path is not None else self.sources
        if not files:
            return None
        h = hashlib.sha1()
        for f in files:
            h.update(str(f).encode() if self.kind == "object" else b"")
            h.update(Path(f).read_bytes() if Path(f).is_file() else b"(missing)")
        return h.hexdigest()


def _obs_space(path: Path) -> tuple[str, list[int] | None]:
    """The observation space's class name and shape an SB3 zip records (readable copy: nothing unpickled)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise ConfigError(f"POLICY {str(path)!r}: not a Stable-Baselines3 model file ({e})") from None
    obs = data.get("observation_space", {}) if isinstance(data, dict) else {}
    kind = str(obs.get(":type:", "")) if isinstance(obs, dict) else ""
    shape = obs.get("_shape") if isinstance(obs, dict) else None
    return kind.rsplit(".", 1)[-1].rstrip("'>"), None if shape is None else [int(x) for x in shape]


def _env_shape(row: Benchmark, regime: str) -> tuple[str, list[int]]:
    params = row.regime(regime).params
    env, _ = row.env(row.instance(params, SEED0), params)
    space = env.observation_space
    env.close()
    return type(space).__name__, list(getattr(space, "shape", None) or ())


def check_model(pol: BenchPolicy, row: Benchmark, regimes: tuple[str, ...]) -> None:
    """Refuse a model whose observation space is not the scenario's env's on every regime (one line)."""
    kind, shape = _obs_space(pol.model_path)  # type: ignore[arg-type]
    bad = []
    for r in regimes:
        k, s = _env_shape(row, r)
        if (kind, shape) != (k, s):
            bad.append((r, k, s))
    if not bad:
        return
    env_id = _spec(row.scenario).env_id
    if len(bad) == len(regimes):
        r, k, s = bad[0]
        raise ConfigError(
            f"POLICY {pol.spec!r}: an SB3 model of another env (observation space {kind} {shape}), not of {env_id} "
            f"with --scenario {row.scenario} ({k} {s} on {r}): pass the scenario it was trained on"
        )
    ok = [r for r in regimes if r not in {b[0] for b in bad}]
    raise ConfigError(
        f"POLICY {pol.spec!r}: its observation space {kind} {shape} is not {env_id}'s on regime "
        f"{', '.join(b[0] for b in bad)}; pass --regimes {' '.join(ok)}"
    )


def _spec(scenario: str) -> Any:
    from gpu_sched_agents.rl.scenarios import SPECS

    return SPECS[scenario]


def _run_folder(path: Path, scenario: str, model: str | None) -> Path:
    cfg_path = path / "config.yaml"
    if not cfg_path.is_file():
        raise ConfigError(f"POLICY {str(path)!r}: a folder without config.yaml, not a run folder of train.py")
    from gpu_sched_env.core.extras import needs_extra

    with needs_extra(f"POLICY {str(path)!r} (a train.py run folder)"):
        from omegaconf import OmegaConf
        from omegaconf.errors import OmegaConfBaseException
    try:
        section = OmegaConf.load(cfg_path).get("scenario")
        trained = "cgrsp" if section is None else str(section.get("name"))
    except (OmegaConfBaseException, AttributeError, ValueError, OSError) as e:
        raise ConfigError(f"POLICY {str(path)!r}: config.yaml is not a train.py run's config ({e})") from None
    if trained != scenario:
        raise ConfigError(
            f"POLICY {str(path)!r}: a train.py run of scenario={trained}, not of {scenario}: pass --scenario {trained}"
        )
    names = (model,) if model else ("best_model.zip", "final_model.zip")
    found = [path / n for n in names if (path / n).is_file()]
    if not found:
        raise ConfigError(f"POLICY {str(path)!r}: no model {' or '.join(names)} in this run folder")
    return found[0]


def resolve(spec: str, scenario: str, model: str | None = None) -> BenchPolicy:
    """The :class:`BenchPolicy` of ``spec`` for ``scenario`` (one-line ConfigError otherwise)."""
    row = benchmark(scenario)
    spec, path = str(spec), Path(str(spec))
    if model is not None and not path.is_dir():
        raise ConfigError(f"--model {model!r}: only for a run folder; POLICY {spec!r} is not one")
    if _MODULE_ATTR.match(spec) and not path.exists():
        return _object(spec, scenario)
    if spec in row.excluded_now():
        raise ConfigError(f"POLICY {spec!r} is not a rule of {scenario}: {row.excluded_now()[spec]}")
    if spec in row.rule_names():
        return BenchPolicy(spec, "rule", spec, scenario)
    if path.is_dir():
        found = _run_folder(path, scenario, model)
        return BenchPolicy(spec, "run", f"ppo ({path.name})", scenario, found)
    if path.is_file() and path.suffix == ".zip":
        return BenchPolicy(spec, "sb3", f"ppo ({path.stem})", scenario, path)
    if path.exists():
        raise ConfigError(f"POLICY {spec!r}: a file that is not an SB3 model (.zip)")
    raise ConfigError(
        f"POLICY {spec!r} is not a registered {scenario} rule nor a module:attr, an SB3 .zip or a run folder; "
        f"{scenario} rules: {', '.join(row.rule_names())}"
    )


def _load_object(spec: str) -> Any:
    from gpu_sched_env.core.registry import load_object

    obj = load_object(spec)
    return obj() if isinstance(obj, type) else obj


def _object(spec: str, scenario: str) -> BenchPolicy:
    from gpu_sched_agents.evaluate.policy import outside_sources

    try:
        obj = _load_object(spec)
    except Exception as e:  # the module's own error (not found, no attribute, raised on import)
        raise ConfigError(f"POLICY {spec!r}: does not load ({type(e).__name__}: {e})") from None
    decides = callable(getattr(obj, "reset", None)) and callable(getattr(obj, "decide", None))
    plans = scenario == "edge" and callable(getattr(obj, "plan", None))
    if not (decides or plans):
        also = " or plan(problem, rng) (an edge planner)" if scenario == "edge" else ""
        raise ConfigError(
            f"POLICY {spec!r}: {type(obj).__name__} does not follow the {scenario} policy protocol: reset(state, rng) "
            f"and decide(view){also}"
        )
    label = str(getattr(obj, "name", None) or spec.split(":")[1])
    return BenchPolicy(spec, "object", label, scenario, sources=outside_sources(), model=obj)


# ---- playing one instance -----------------------------------------------------------------------------------
_MODELS: dict[str, Any] = {}  # model path -> the loaded model (per process)


def _model(path: str) -> Any:
    if path not in _MODELS:
        import sys

        from gpu_sched_env.core.extras import needs_extra

        with needs_extra(f"POLICY {path!r} (an SB3 model)"):
            from sb3_contrib import MaskablePPO
        try:
            _MODELS[path] = MaskablePPO.load(path, device="cpu")
        except Exception as e:
            raise ConfigError(f"POLICY {path!r}: does not load as MaskablePPO ({type(e).__name__}: {e})") from None
        if "torch" in sys.modules:  # one thread per worker process: oversubscribed cores crawl
            sys.modules["torch"].set_num_threads(1)
    return _MODELS[path]


class _Options:
    """An env whose ``reset(seed=…)`` passes the instance's reset options (the edge env's workloads)."""

    def __init__(self, env: Any, options: dict[str, Any]) -> None:
        self.env, self.unwrapped, self._options = env, env, options

    def reset(self, seed: int | None = None) -> Any:
        return self.env.reset(seed=seed, options=self._options)

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def close(self) -> None:
        self.env.close()


def _play_model(row: Benchmark, path: str, instance: Any, params: Any, seed: int) -> dict[str, float]:
    from gpu_sched_agents.rl.scenarios import play

    model = _model(path)
    env, options = row.env(instance, params)
    driven = _Options(env, options) if options else env
    spec = _spec(row.scenario)

    def act(obs: Any) -> int:
        return int(np.asarray(model.predict(obs, action_masks=env.action_masks(), deterministic=True)[0]))

    out = play(driven, seed, act, lambda e, info: spec.summary(env, info))
    env.close()
    return {m: float(out[m]) for m in row.metrics}


_OBJECTS: dict[str, Any] = {}


def play_policy(
    scenario: str, kind: str, spec: str, path: str | None, regime: str, instance: Any, seed: int
) -> dict[str, float]:
    """The policy's metrics on one instance (a fault of a ``module:attr`` object: one ConfigError naming where)."""
    row = benchmark(scenario)
    params = row.regime(regime).params
    if kind == "rule":
        return row.play_rule(spec, instance, params, seed)  # type: ignore[misc]
    if kind in ("sb3", "run"):
        return _play_model(row, str(path), instance, params, seed)
    if spec not in _OBJECTS:
        _OBJECTS[spec] = _load_object(spec)
    try:
        return row.play_object(_OBJECTS[spec], instance, params, seed)  # type: ignore[misc]
    except ConfigError as e:
        raise ConfigError(f"POLICY {spec!r} on {regime}, seed {seed}: {e}") from None
    except Exception as e:
        raise ConfigError(f"POLICY {spec!r} on {regime}, seed {seed}: {type(e).__name__}: {e}") from None


def bound_row(row: Benchmark, regime: str, instance: Any) -> dict[str, Any]:
    """The bound of one instance: value, kind (optimum / lower_bound) and method; or no bound and why."""
    hook = row.bound_hook()
    if hook is None:
        return {"bound_kind": "none", "bound_method": no_bound_reason(row)}
    limit = row.bound_limit_s if row.regime(regime).exact else 0.0
    b = row.bound_call(hook, instance, limit)  # type: ignore[misc]
    return {row.objective: float(b.value), "bound_kind": b.kind, "bound_method": b.method}


def cell(
    scenario: str,
    regime: str,
    seed: int,
    rules: bool,
    kind: str | None = None,
    spec: str | None = None,
    path: str | None = None,
) -> list[dict[str, Any]]:
    """The rows of one instance (top-level: process pools and Ray pickle it): the rules and bound, or the policy."""
    row = benchmark(scenario)
    params = row.regime(regime).params
    instance = row.instance(params, seed)  # type: ignore[misc]
    base = {"regime": regime, "seed": int(seed)}
    if not rules:
        return [{**base, "policy": POLICY, **play_policy(scenario, str(kind), str(spec), path, regime, instance, seed)}]
    out = [{**base, "policy": r, **row.play_rule(r, instance, params, seed)} for r in row.rule_names()]  # type: ignore[misc]
    return [*out, {**base, "policy": BOUND, **bound_row(row, regime, instance)}]


_REFERENCE: dict[tuple[str, str, int, tuple[str, ...]], list[dict[str, Any]]] = {}  # rules' and bound's rows


def regime_rows(pol: BenchPolicy, proto: BenchProtocol, regime: str, fan: dict[str, Any]) -> pd.DataFrame:
    """Every row of one regime: the rules and the bound (memoised: several POLICY share them), then the policy."""
    from gpu_sched_env.core.fanout import map_cells

    row = benchmark(proto.scenario)
    names = row.rule_names()
    seeds = list(range(SEED0, SEED0 + proto.seeds))
    todo = [s for s in seeds if (proto.scenario, regime, s, names) not in _REFERENCE]
    ref_cells = [{"scenario": proto.scenario, "regime": regime, "seed": s, "rules": True} for s in todo]
    mine = pol.kind != "rule"
    own = [
        {
            "scenario": proto.scenario,
            "regime": regime,
            "seed": s,
            "rules": False,
            "kind": pol.kind,
            "spec": pol.spec,
            "path": None if pol.model_path is None else str(pol.model_path),
        }
        for s in seeds
        if mine
    ]
    if pol.kind == "object":  # an object loaded here plays here (its module may not import in a worker)
        done = map_cells(cell, ref_cells, **fan) + map_cells(cell, own, executor="serial", progress=False)
    else:
        done = map_cells(cell, ref_cells + own, **fan)
    for s, rows in zip(todo, done[: len(todo)]):
        _REFERENCE[(proto.scenario, regime, s, names)] = rows
    rows = [r for s in seeds for r in _REFERENCE[(proto.scenario, regime, s, names)]]
    rows += [r for part in done[len(todo) :] for r in part]
    if not mine:
        rows += [{**r, "policy": POLICY} for r in rows if r["policy"] == pol.spec]
    return pd.DataFrame(rows)


SOURCES = (
    "gpu_sched_env/core/*.py",
    "agents/evaluate/bench.py",
    "agents/evaluate/scenarios.py",
    "agents/rl/scenarios.py",
)


def days_key(pol: BenchPolicy, proto: BenchProtocol) -> dict[str, Any]:
    """What decides a policy's stored regimes (``days/key.json``): a rerun reuses them only when all of it is equal."""
    from gpu_sched_env.core.store import code_version, package_version

    s = proto.scenario
    code = code_version((*SOURCES, f"gpu_sched_env/{s}/**/*.py", f"agents/heuristics/{s}/**/*.py"))
    return json.loads(
        json.dumps(
            {
                "policy": {k: v for k, v in pol.describe().items() if k != "label"},
                "fingerprint": {"sha1": pol.fingerprint(), "sources": [str(f) for f in pol.sources]},
                "protocol": asdict(proto),
                "package": package_version(),
                "code": code,
            },
            default=str,
        )
    )


def run_regimes(
    pol: BenchPolicy, proto: BenchProtocol, fan: dict[str, Any], parts: Path | None = None, log: Any = print
) -> pd.DataFrame:
    """Every regime's rows; with ``parts`` each finished regime is stored there and reused by a rerun."""
    from gpu_sched_env.core.io import atomic_write_table

    frames = []
    for regime in proto.regimes:
        path = None if parts is None else parts / f"{regime}.csv"
        if path is not None and path.is_file():
            frames.append(pd.read_csv(path, keep_default_na=False, na_values=[""]))
            log(f"{regime}: reused {path}")
            continue
        t0 = time.perf_counter()
        rows = regime_rows(pol, proto, regime, fan)
        if path is not None:
            atomic_write_table(path, rows)
        frames.append(rows)
        log(f"{regime}: {proto.seeds} instances, {time.perf_counter() - t0:.1f} s")
    return pd.concat(frames, ignore_index=True)


# ---- judging ------------------------------------------------------------------------------------------------
def _stats(x: np.ndarray) -> dict[str, float]:
    ci = mean_ci(x)
    return {"mean": ci.mean, "mean_ci": ci.half_width}


def _gap(values: np.ndarray, bounds: pd.DataFrame, objective: str) -> dict[str, Any]:
    """The gap (%) of per-instance ``values`` to the bounds; NaN where a bound is 0 and the value is not."""
    from gpu_sched_env.core.bounds import Bound

    gaps = np.array(
        [Bound(float(b), k, 0.0, "").gap_pct(float(v)) for v, b, k in zip(values, bounds[objective], bounds.bound_kind)]
    )
    ok = gaps[~np.isnan(gaps)]
    ci = mean_ci(ok) if ok.size else None
    return {
        "mean_pct": None if ci is None else ci.mean,
        "ci_pct": None if ci is None else ci.half_width,
        "n_optimum": int((bounds.bound_kind == "optimum").sum()),
        "n_lower_bound": int((bounds.bound_kind == "lower_bound").sum()),
    }


def judge(rows: pd.DataFrame, proto: BenchProtocol) -> dict[str, dict[str, Any]]:
    """Per regime: every rule's and the policy's mean ± CI, the best rule, the paired tests (Holm), the bound's gap."""
    row = benchmark(proto.scenario)
    judged = (row.objective, *((row.guard,) if row.guard else ()))
    scopes: dict[str, dict[str, Any]] = {}
    values: dict[str, np.ndarray] = {}
    pairs, keys = [], []
    for regime in proto.regimes:
        g = rows[rows.regime == regime]
        by = {p: d.sort_values("seed") for p, d in g.groupby("policy", sort=False)}
        rules = [r for r in row.rule_names() if r in by]
        means = pd.DataFrame({m: {r: float(by[r][m].mean()) for r in rules} for m in judged})
        best = criteria.best_rule(means, rules, (row.objective,))
        mine, rule = by[POLICY], by[best]
        bounds = by[BOUND] if BOUND in by else pd.DataFrame()
        s: dict[str, Any] = {
            "unit": "instance",
            "n": int(len(mine)),
            "params": dict(row.regime(regime).params),
            "exact": row.regime(regime).exact,
            "policy": {m: _stats(mine[m].to_numpy(float)) for m in row.metrics},
            "best_rule": best,
            "rules": {r: {m: _stats(by[r][m].to_numpy(float)) for m in row.metrics} for r in rules},
            "vs_best_rule": {},
        }
        has_bound = len(bounds) and (bounds.bound_kind != "none").all()
        if has_bound:
            s["bound"] = {
                **_stats(bounds[row.objective].to_numpy(float)),
                "method": str(bounds.bound_method.iloc[0]),
                "policy_gap": _gap(mine[row.objective].to_numpy(float), bounds, row.objective),
                "best_rule_gap": _gap(rule[row.objective].to_numpy(float), bounds, row.objective),
            }
            n_lb = s["bound"]["policy_gap"]["n_lower_bound"]
            s["bound"]["status"] = "optimum" if n_lb == 0 else "bound only"
        else:
            s["bound"] = {"status": "no bound", "method": str(bounds.bound_method.iloc[0]) if len(bounds) else ""}
        scopes[regime] = s
        for m in judged:
            a, b = f"{regime}|policy|{m}", f"{regime}|{best}|{m}"
            values[a], values[b] = mine[m].to_numpy(float), rule[m].to_numpy(float)
            pairs.append((a, b))
            keys.append((regime, m))
    for (regime, m), (a, b), r in zip(keys, pairs, compare_pairs(values, pairs, ALPHA)):
        ci = mean_ci(values[a] - values[b])
        scopes[regime]["vs_best_rule"][m] = {
            "policy": r["mean_a"],
            "rule": r["mean_b"],
            "diff": r["mean_diff"],
            "ci_low": ci.lo,
            "ci_high": ci.hi,
            "t_p": r["t_p"],
            "t_p_holm": r["t_p_holm"],
            "wilcoxon_p": r["w_p"],
            "wilcoxon_p_holm": r["w_p_holm"],
            "cohens_d": r["cohens_d"],
        }
    for s in scopes.values():
        o = s["vs_best_rule"][row.objective]
        if row.guard:
            x = s["vs_best_rule"][row.guard]
            s["verdict"] = criteria.verdict(o["diff"], o["t_p_holm"], x["diff"], x["t_p_holm"])
            guard_diff = x["diff"]
        else:
            s["verdict"] = criteria.significance(o["diff"], o["t_p_holm"])
            guard_diff = 0.0
        s["at_parity"] = criteria.within(o["ci_high"], o["rule"], guard_diff, criteria.PARITY_MARGIN)
    return scopes


def score(scopes: dict[str, dict[str, Any]], objective: str) -> dict[str, Any]:
    """The leaderboard's score: the mean over the regimes of the policy's mean objective over the best rule's.

    A regime where the best rule's mean is 0 and the policy's is not has no ratio: it is left out of the
    mean and named under ``left_out`` (the paired test alone judges the policy there). A policy left out
    of every regime has ``objective_ratio`` None.
    """
    ratios, left_out = [], []
    for name, s in scopes.items():
        mine, rule = s["policy"][objective]["mean"], s["rules"][s["best_rule"]][objective]["mean"]
        if mine == rule:
            ratios.append(1.0)
        elif rule > 0:
            ratios.append(mine / rule)
        else:
            left_out.append(name)
    return {
        "objective_ratio": float(np.mean(ratios)) if ratios else None,
        "left_out": left_out,
        "regimes": len(scopes),
        "definition": f"mean over the regimes of (policy's mean {objective}) / (best rule's mean {objective}); "
        "1 = the best rule of every regime, lower is better; a regime where the best rule's mean is 0 and the "
        "policy's is not gives no ratio and is left out ('(k of n)': the regimes kept); ranked by the regimes "
        "left out, then the ratio",
    }


def report(pol: BenchPolicy, proto: BenchProtocol, rows: pd.DataFrame, command: str, wall_s: float) -> dict[str, Any]:
    """report.json's content (:data:`gpu_sched_agents.evaluate.report.SCHEMA`, with ``scenario``)."""
    from gpu_sched_agents.evaluate.report import SCHEMA

    scopes = judge(rows, proto)
    return {
        "schema": SCHEMA,
        "scenario": proto.scenario,
        "policy": pol.describe(),
        "protocol": proto.describe(),
        "scopes": scopes,
        "jax": None,
        "score": score(scopes, benchmark(proto.scenario).objective),
        "command": command,
        "wall_s": wall_s,
    }


__all__ = [
    "BOUND",
    "POLICY",
    "SEED0",
    "BenchPolicy",
    "BenchProtocol",
    "cell",
    "check_model",
    "days_key",
    "judge",
    "play_policy",
    "protocol",
    "report",
    "resolve",
    "run_regimes",
    "score",
]
