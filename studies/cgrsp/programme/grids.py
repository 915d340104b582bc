"""The CGRSP experiment programme (spec §5): definitions, default grids, and their cells.

An :class:`Experiment` names a design (policies × seeds × days × one swept parameter, or a
month); :func:`configure` returns a copy with user overrides, validated; :func:`build_cells`
expands it into *cells*: one simulated day each, with the labels that place it in the
experiment's tidy table. Cells that two experiments share (e.g. the hectic day at the
default parameters) are simulated once, because the store keys them by their inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.params import DAY_TYPES
from gpu_sched_env.cgrsp.policies import per_policy_kwargs, split_kwargs
from gpu_sched_env.cgrsp.workload import (
    DEFAULT_MONTH_MIX,
    MONTH_SEED_BASE,
    month_day_seed,
    month_plan,
)
from gpu_sched_env.core.errors import ConfigError, check_choice, check_keys, check_number

KINDS = ("policies", "sweep", "objective", "month")
SEEDS_30 = tuple(range(30))
STOCK_DWELLS = (60.0, 300.0, 900.0, 3600.0)  # [s] mean dwell of the persistent stock process
# labels: "fresh", or the markov chain's mean dwell D in seconds ("60", "300", ...)
STOCK_SETTINGS = (("fresh", (("stock_process", "fresh"),)),) + tuple(
    (f"{d:g}", (("stock_process", "markov"), ("stock_dwell_s", d))) for d in STOCK_DWELLS
)


@dataclass(frozen=True)
class Experiment:
    """One experiment of the programme and its (overridable) design."""

    name: str
    title: str
    kind: str  # one of KINDS
    policies: tuple[str, ...] = POLICY_NAMES
    seeds: tuple[int, ...] = SEEDS_30  # run seeds; replication seeds for a month
    days: tuple[str, ...] = ("hectic",)
    param: str | None = None  # swept simulator parameter or policy knob (kind "sweep")
    values: tuple[Any, ...] = ()  # its values
    # fixed overrides for every cell: simulator parameters, and knobs of the policies in play
    # (each cell gets the parameters and its own policy's knobs)
    base_params: tuple[tuple[str, Any], ...] = ()
    w_cost: tuple[float, ...] = ()  # objective: cost weights
    ratios: tuple[float, ...] = ()  # objective: α2/α1 ratios
    mix: tuple[tuple[str, float], ...] = tuple(DEFAULT_MONTH_MIX.items())  # month day-type mix
    mix_mode: str = "counts"
    n_days: int = 30
    # labelled parameter sets for a sweep whose values are labels, not values of one field
    # (``param`` then names the label column): label -> ((field, value), ...)
    settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

    @property
    def params(self) -> dict[str, Any]:
        """Fixed parameter overrides as a dict."""
        return dict(self.base_params)


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment("single", "Single-seed benchmark (seed 42)", "policies", seeds=(42,)),
        Experiment("validation", "Statistical validation: 30 seeds, hectic day", "policies"),
        Experiment(
            "daytype",
            "Day-type sensitivity (4 day types × 30 seeds)",
            "sweep",
            days=("quiet", "normal", "hectic", "surge"),
        ),
        Experiment(
            "tight",
            "Tight-deadline fraction on the surge day",
            "sweep",
            days=("surge",),
            param="tight_fraction",
            values=(0.1, 0.3, 0.5, 0.7, 0.9),
        ),
        Experiment("cmax", "Concurrency cap C_max (hectic day)", "sweep", param="c_max", values=(3, 5, 7, 10)),
        Experiment(
            "theta",
            "Rescue laxity threshold θ (hectic day)",
            "sweep",
            policies=("spt_rescue", "adaptive"),
            param="theta",
            values=(60.0, 180.0, 300.0, 600.0, 1200.0),
        ),
        Experiment(
            "crstar",
            "CADR critical-ratio bound CR* (hectic day)",
            "sweep",
            policies=("cadr", "cadr_oo"),
            param="cr_star",
            values=(1.5, 2.0, 3.0, 5.0, 10.0),
        ),
        Experiment(
            "rho",
            "RH reservation ρ_res on normal, surge and hectic days",
            "sweep",
            policies=("rh",),
            days=("normal", "surge", "hectic"),
            param="rho_res",
            values=(0, 1, 2, 3),
        ),
        Experiment(
            "rhomarkov",
            "RH reservation ρ_res under a persistent stock status (Markov, D = 900 s; diagnostic)",
            "sweep",
            policies=("rh",),
            days=("normal", "surge"),
            param="rho_res",
            values=(0, 1, 2, 3),
            base_params=(("stock_process", "markov"), ("stock_dwell_s", 900.0)),
        ),
        Experiment(
            "rhdefer",
            "RH idle-slot deferral mode (hectic day; diagnostic)",
            "sweep",
            policies=("rh",),
            param="rh_defer",
            values=("expected", "low", "never"),
        ),
        Experiment(
            "rhplan",
            "RH placement: idle slots only vs the full rolling-horizon timeline (day types; diagnostic)",
            "sweep",
            policies=("rh",),
            days=("quiet", "normal", "hectic", "surge"),
            param="rh_plan",
            values=("idle", "timeline"),
        ),
        Experiment(
            "stock",
            "Stock persistence: fresh draws vs a Markov chain with mean dwell D (hectic, surge)",
            "sweep",
            policies=POLICY_NAMES + ("edf_defer_low",),
            days=("hectic", "surge"),
            param="stock",
            values=tuple(label for label, _ in STOCK_SETTINGS),
            settings=STOCK_SETTINGS,
        ),
        Experiment(
            "stockrh",
            "RH with deferral (rh_defer=expected) under fresh and persistent stock (hectic, surge)",
            "sweep",
            policies=("rh",),
            days=("hectic", "surge"),
            param="stock",
            values=tuple(label for label, _ in STOCK_SETTINGS),
            settings=STOCK_SETTINGS,
            base_params=(("rh_defer", "expected"),),
        ),
        Experiment(
            "objective",
            "Objective-weight sensitivity and tardiness re-scoring (hectic day)",
            "objective",
            w_cost=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
            ratios=(1.0, 5.0, 10.0, 20.0, 50.0),
        ),
        Experiment("month", "Monthly simulation: 30 days × 10 replications", "month", seeds=tuple(range(10))),
    )
}
EXPERIMENT_NAMES: tuple[str, ...] = tuple(EXPERIMENTS)

# what a user may override, per CLI flag / keyword
OVERRIDABLE = ("policies", "seeds", "days", "values", "base_params", "w_cost", "ratios", "mix", "mix_mode", "n_days")


def configure(name: str, **overrides: Any) -> Experiment:
    """The named experiment with overrides (None values are ignored), validated.

    Raises:
        ConfigError: unknown experiment or override, a policy/day/parameter/knob value the
            simulator or policy rejects (e.g. ``rho_res`` ≥ ``c_max``), a knob of no policy in
            play, or an empty grid.
    """
    check_choice("experiment", name, EXPERIMENTS)
    check_keys(overrides, OVERRIDABLE, section=f"experiment {name!r}")
    kw = {k: v for k, v in overrides.items() if v is not None}
    for k in ("policies", "seeds", "days", "values", "w_cost", "ratios"):
        if k in kw:
            kw[k] = tuple(kw[k])
    for k in ("base_params", "mix"):
        if k in kw and isinstance(kw[k], dict):
            kw[k] = tuple(kw[k].items())
    if "values" in kw and EXPERIMENTS[name].settings:  # labels (``--values 900`` reads as the number 900)
        kw["values"] = tuple(v if isinstance(v, str) else f"{v:g}" for v in kw["values"])
    exp = replace(EXPERIMENTS[name], **kw)
    validate(exp)
    return exp


def validate(exp: Experiment) -> None:
    """Check every name and value of ``exp`` (builds each distinct parameter set once)."""
    for label, seq in (("policies", exp.policies), ("seeds", exp.seeds), ("days", exp.days)):
        if not seq:
            raise ConfigError(f"experiment {exp.name!r}: {label} is empty")
    for p in exp.policies:
        check_choice("policy", p, all_policy_names())
    for s in exp.seeds:
        check_number("seed", s, lo=0, integer=True)
    for d in exp.days:
        check_choice("day", d, DAY_TYPES)
    split_kwargs(exp.params, exp.policies)  # names: parameters or knobs of a policy in play
    if exp.kind == "sweep" and exp.param is not None:
        if not exp.values:
            raise ConfigError(f"experiment {exp.name!r}: values of {exp.param} is empty")
        if exp.settings:
            for v in exp.values:
                check_choice(exp.param, v, dict(exp.settings))
        if exp.param in exp.params:
            raise ConfigError(f"experiment {exp.name!r}: {exp.param} is swept; do not also fix it in base parameters")
    if exp.kind == "objective":
        for w in exp.w_cost:
            check_number("w_cost", w, lo=0.0, hi=1.0)
        for r in exp.ratios:
            check_number("alpha2/alpha1 ratio", r, lo=0.0)
        if not exp.w_cost or not exp.ratios:
            raise ConfigError(f"experiment {exp.name!r}: w_cost and ratios must be non-empty")
    if exp.kind == "month":
        check_number("n_days", exp.n_days, lo=1, integer=True)
        month_plan(0, dict(exp.mix), exp.n_days, exp.mix_mode)  # raises on a bad mix
        days = tuple(sorted({d for d, _ in exp.mix}))
    else:
        days = exp.days
    for day in days:
        for pset in _param_sets(exp):
            per_policy_kwargs(day, pset, exp.policies)


def _param_sets(exp: Experiment) -> list[dict[str, Any]]:
    if exp.kind == "sweep" and exp.param is not None:
        if exp.settings:
            named = dict(exp.settings)
            return [{**exp.params, **dict(named[v])} for v in exp.values]
        return [{**exp.params, exp.param: v} for v in exp.values]
    return [exp.params]


def all_policy_names() -> tuple[str, ...]:
    """The published policies plus the extension heuristics (e.g. ``edf_defer_low``)."""
    from gpu_sched_env.cgrsp.policies import policy_names

    return policy_names(published_only=False)


def build_cells(exp: Experiment) -> list[dict[str, Any]]:
    """Cells of ``exp``: dicts with ``policy``, ``day``, ``seed``, ``params`` and ``labels``.

    A cell's ``params`` hold the simulator parameters and only its own policy's knobs, so a
    knob swept for one policy leaves the cells of the others unchanged (and shared).

    ``labels`` are the extra tidy-table columns: ``cell`` (a readable cell name), the swept
    parameter's value under its own name, and for a month ``rep``, ``day_index``.
    """
    cells: list[dict[str, Any]] = []

    def add(policy: str, day: str, seed: int, pset: dict[str, Any], labels: dict[str, Any]) -> None:
        params, knobs = split_kwargs(pset, exp.policies)
        cells.append(
            {"policy": policy, "day": day, "seed": int(seed), "params": {**params, **knobs[policy]}, "labels": labels}
        )

    if exp.kind == "month":
        for rep in exp.seeds:
            plan = month_plan(int(rep), dict(exp.mix), exp.n_days, exp.mix_mode)
            for d, day in enumerate(plan):
                seed = month_day_seed(int(rep), d)
                for pol in exp.policies:
                    add(pol, day, seed, exp.params, {"cell": f"rep{rep}/day{d:02d}", "rep": int(rep), "day_index": d})
        return cells
    for day in exp.days:
        for i, pset in enumerate(_param_sets(exp)):
            lab: dict[str, Any] = {"cell": day}
            if exp.kind == "sweep" and exp.param is not None:
                v = exp.values[i]
                lab = {"cell": f"{day}/{exp.param}={v}", exp.param: v}
            for pol in exp.policies:
                for s in exp.seeds:
                    add(pol, day, s, pset, dict(lab))
    return cells


def parse_seeds(items: list[str]) -> tuple[int, ...]:
    """Seeds from CLI tokens: integers or inclusive ranges ``A-B`` (``0-29``)."""
    out: list[int] = []
    for tok in items:
        for part in str(tok).split(","):
            part = part.strip()
            if not part:
                continue
            try:
                if "-" in part[1:]:
                    a, b = part.split("-", 1)
                    lo, hi = int(a), int(b)
                    if hi < lo:
                        raise ValueError
                    out.extend(range(lo, hi + 1))
                else:
                    out.append(int(part))
            except ValueError as e:
                raise ConfigError(f"--seeds {tok!r}: expected integers or ranges like 0-29") from e
    if not out:
        raise ConfigError("--seeds: no seeds given")
    return tuple(out)


__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_NAMES",
    "KINDS",
    "MONTH_SEED_BASE",
    "STOCK_SETTINGS",
    "all_policy_names",
    "Experiment",
    "build_cells",
    "configure",
    "parse_seeds",
    "validate",
]
