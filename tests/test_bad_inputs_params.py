"""Every numeric parameter has a bounded range: NaN, ±inf and values that would make a model explode are refused.

Each refusal is one ``ConfigError`` line naming the field, the value and what is allowed: in
``make_params`` (NumPy), through ``gym.make`` for every scenario, on the ``gpu-sched`` command
line, and in the JAX twin (``rules.evaluate`` / ``rollout`` check the params they are given; a
day that ends with jobs never run raises; a JAX action that is no integer in range is flagged
invalid and plays the substitute, never a wrapped or truncated index).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import gpu_sched_env  # noqa: F401 (registers the ids)
from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import (
    DAY_TYPES,
    MAX_REDRAWS,
    MAX_TIME_S,
    GPUType,
    make_params,
    markov_redraw_rate,
    with_overrides,
)
from gpu_sched_env.cgrsp.stock import MarkovStock, redraw_rates, stock_params
from gpu_sched_env.core.errors import ConfigError, check_number

try:  # the JAX twin is an optional extra: its tests skip without it
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    jax = jnp = None
needs_jax = pytest.mark.skipif(jax is None, reason="needs the jax extra (pip install 'gpu_sched_env[jax]')")

NAN, INF = float("nan"), float("inf")
MARKOV = {"stock_process": "markov"}


def one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert "\n" not in msg
    return msg


# ----------------------------------------------------------------------------- NumPy parameters
@pytest.mark.parametrize(
    "kw, pattern",
    [
        ({**MARKOV, "stock_dwell_s": 1e-3}, r"^stock_dwell_s = 0\.001 is out of range; allowed: \[1, 3\.1536e\+07\]$"),
        ({**MARKOV, "stock_dwell_s": 1e308}, r"^stock_dwell_s = 1e\+308 is out of range"),
        ({**MARKOV, "stock_dwell_s": NAN}, r"^stock_dwell_s = nan must be a finite number$"),
        ({"runtime_sigma": NAN}, r"^runtime_sigma = nan must be a finite number$"),
        ({"runtime_sigma": 1e3}, r"^runtime_sigma = 1000\.0 is out of range; allowed: \[0, 3\]$"),
        ({"arrival_rate": NAN}, r"^arrival_rate = nan must be a finite number$"),
        ({"arrival_rate": INF}, r"^arrival_rate = inf must be a finite number$"),
        (
            {"arrival_rate": 1e-300},
            r"^arrival_rate = 1e-300 with n_jobs = 950: the expected arrival span .* at most 1e\+10 s",
        ),
        ({"n_jobs": 10**9}, r"^n_jobs = 1000000000 is out of range; allowed: \[1, 1e\+06\]$"),
        ({"c_max": 10**6}, r"^c_max = 1000000 is out of range; allowed: \[1, 1024\]$"),
        ({"delay_low": (600.0, 1e308)}, r"^delay_low\[1\] = 1e\+308 is out of range; allowed: \[0, 3\.1536e\+07\]$"),
        ({"delay_high": (NAN, 1.0)}, r"^delay_high\[0\] = nan must be a finite number$"),
        ({"tight_window": 1e308}, r"^tight_window = 1e\+308 is out of range; allowed: \(0, 3\.1536e\+07\]$"),
        ({"loose_window": INF}, r"^loose_window = inf must be a finite number$"),
        ({"alpha1": 1e308}, r"^alpha1 = 1e\+308 is out of range; allowed: \[0, 1e\+09\]$"),
        ({"alpha2": NAN}, r"^alpha2 = nan must be a finite number$"),
        ({"p_medium_factor": INF}, r"^p_medium_factor = inf must be a finite number$"),
        ({"tod_bands": ((0.0, NAN),)}, r"^tod_bands\[0h\] = nan must be a finite number$"),
        ({"start_hour_utc": NAN}, r"^start_hour_utc = nan must be a finite number$"),
        ({"tight_fraction": NAN}, r"^tight_fraction = nan must be a finite number$"),
        ({"complexity_probs": (NAN, 0.5, 0.5)}, r"^complexity_probs\[low\] = nan must be a finite number$"),
    ],
    ids=lambda v: repr(v)[:60],
)
def test_make_params_refuses_unbounded_values(kw, pattern):
    with pytest.raises(ConfigError, match=pattern) as e:
        make_params("hectic", **kw)
    one_line(e)
    with pytest.raises(ConfigError, match=pattern):  # a copy with the field replaced is checked alike
        with_overrides(make_params("hectic"), **kw)


@pytest.mark.parametrize(
    "field, value, pattern",
    [
        ("price_per_h", 1e308, r"price_per_h = 1e\+308 is out of range; allowed: \[0, 1e\+06\]"),
        ("price_per_h", NAN, r"price_per_h = nan must be a finite number"),
        ("mean_runtime_s", (1.0, 2.0, 1e308), r"mean_runtime_s\[high\] = 1e\+308 is out of range"),
        ("mean_runtime_s", (1.0, INF, 3.0), r"mean_runtime_s\[medium\] = inf must be a finite number"),
        ("beta_high", NAN, r"beta_high = nan must be a finite number"),
        ("cuda_cores", 10**400, r"cuda_cores = 1000.* must be a finite number"),
    ],
)
def test_gpu_type_fields_are_bounded(field, value, pattern):
    row = dict(name="g", cuda_cores=100, vram_gb=10, price_per_h=1.0, mean_runtime_s=(1.0, 2.0, 3.0), beta_high=0.5)
    with pytest.raises(ConfigError, match=rf"^gpu_types\['g'\]\.{pattern}") as e:
        GPUType(**{**row, field: value})
    one_line(e)


def test_an_int_beyond_floats_range_is_no_finite_number():
    with pytest.raises(ConfigError, match=r"^n = 1{401} must be a finite number$"):
        check_number("n", int("1" * 401), lo=1, integer=True)


def test_a_markov_day_needing_too_many_redraws_is_refused_with_the_dwell_it_needs():
    with pytest.raises(
        ConfigError, match=r"^stock_dwell_s = 1\.0 is too short for this day: .* stock_dwell_s >= "
    ) as e:
        make_params("hectic", n_jobs=100_000, **MARKOV, stock_dwell_s=1.0)
    need = float(one_line(e).rsplit(">= ", 1)[1].split()[0])
    make_params("hectic", n_jobs=100_000, **MARKOV, stock_dwell_s=need * 1.001)  # the dwell it names passes


@pytest.mark.parametrize("day", sorted(DAY_TYPES))
def test_the_range_keeps_every_shipped_day_and_its_limits(day):
    """D = 1 s (the fresh-limit test's dwell) and D = one year pass on every day type, as do the other limits."""
    for dwell in (1.0, 60.0, 300.0, 900.0, 3600.0, MAX_TIME_S):
        p = make_params(day, **MARKOV, stock_dwell_s=dwell)
        assert p.n_jobs / p.arrival_rate * markov_redraw_rate(p) <= MAX_REDRAWS
    make_params(day, runtime_sigma=3.0, alpha1=1e9, alpha2=1e9, c_max=1024, delay_low=(0.0, MAX_TIME_S))


def test_the_redraw_bound_reckons_with_the_stock_models_own_rates():
    p = make_params("surge", **MARKOV, stock_dwell_s=60.0, p_high_cap=1.0, tod_bands=((0.0, 1.0), (12.0, 1.999)))
    rates = redraw_rates(Fleet.from_params(p), 60.0)
    assert markov_redraw_rate(p) == max(max(r) for r in rates)
    assert MarkovStock(Fleet.from_params(p), 0, 60.0).levels(100.0) is not None
    with pytest.raises(ConfigError, match=r"^stock_dwell_s = 0\.5 is out of range"):
        MarkovStock(Fleet.from_params(p), 0, 0.5)


@pytest.mark.parametrize("dwell", ["0.001", "nan", "inf", "1e308", "0"])
def test_stock_settings_refuse_dwells_outside_the_range(dwell):
    with pytest.raises(
        ConfigError, match=rf"^dwell = '{dwell}' is not allowed; allowed: 'fresh' or a number of seconds"
    ):
        stock_params(dwell)
    assert stock_params("1") == {"stock_process": "markov", "stock_dwell_s": 1.0}


# ----------------------------------------------------------------------------- gym.make, every scenario
BAD_MAKE = [
    ("CGRSP-v0", {**MARKOV, "stock_dwell_s": 1e-3}, r"^stock_dwell_s = 0\.001 is out of range"),
    ("CGRSP-v0", {"reward_scale": 1e308}, r"^reward_scale = 1e\+308 is out of range; allowed: \[1e-09, 1000\]$"),
    ("CGRSP-v0", {"reward_scale": NAN}, r"^reward_scale = nan must be a finite number$"),
    ("CGRSP-v0", {"reward_scale": 1e-320}, r"^reward_scale = 1e-320 is out of range"),
    ("CGRSP-v0", {"window": 10**9}, r"^window = 1000000000 is out of range; allowed: \[1, 10000\]$"),
    ("CGRSP-v0", {"slot_rows": 10**9}, r"^slot_rows = 1000000000 is out of range; allowed: \[5, 1024\]$"),
    ("CGRSP-v0", {"reward_weights": {"wait": 1e308}}, r"^reward_weights\.wait = 1e\+308 is out of range"),
    ("CGRSP-v0", {"shaping_gamma": NAN}, r"^shaping_gamma = nan must be a finite number$"),
    ("CGRSP-v0", {"alpha1": INF}, r"^alpha1 = inf must be a finite number$"),
    ("HGSP-v0", {"n_tasks": 10**9}, r"^n_tasks = 1000000000 is out of range; allowed: \[1, 1e\+06\]$"),
    ("HGSP-v0", {"reward_weights": {"flow": 1e308}}, r"^reward_weights\.flow = 1e\+308 is out of range"),
    ("HGSP-v0", {"reward_weights": {"flow": NAN}}, r"^reward_weights\.flow = nan must be a finite number$"),
    ("LLMServe-v0", {"dt": 1e-300}, r"^dt = 1e-300 is out of range; allowed: \[0\.001, 3600\]$"),
    ("LLMServe-v0", {"dt": NAN}, r"^dt = nan must be a finite number$"),
    ("LLMServe-v0", {"n_requests": 10**9}, r"^n_requests = 1000000000 is out of range"),
    ("MIG-v0", {"n_jobs": 10**9}, r"^n_jobs = 1000000000 is out of range; allowed: \[1, 1e\+06\]$"),
    ("MIG-v0", {"poll_interval": 10**12}, r"^poll_interval = 1000000000000 is out of range; allowed: \[1, 1e\+06\]$"),
    ("MIG-v0", {"capacities": (10**30,)}, r"^capacities\[0\] = 1{1}0{30} is out of range; allowed: \[1, 1e\+07\]$"),
    ("MIG-v0", {"reward_weights": {"deadline": 1e308}}, r"^reward_weights\.deadline = 1e\+308 is out of range"),
    ("EdgeBatch-v0", {"n_tasks": 10**9}, r"^n_tasks = 1000000000 is out of range"),
    (
        "EdgeBatch-v0",
        {"split_threshold_gb": 1e-300},
        r"^split_threshold_gb = 1e-300 is out of range; allowed: \[0\.1, 1e\+06\]$",
    ),
    ("EdgeBatch-v0", {"split_threshold_gb": NAN}, r"^split_threshold_gb = nan must be a finite number$"),
    (
        "EdgeBatch-v0",
        {"reward_scale_s": 1e-300},
        r"^reward_scale_s = 1e-300 is out of range; allowed: \[0\.001, 1e\+09\]$",
    ),
    ("EdgeBatch-v0", {"mix": {"mnist": 1e308}}, r"^mix\.mnist = 1e\+308 is out of range; allowed: \[0, 1e\+09\]$"),
    (
        "EdgeBatch-v0",
        {"reward_weights": {"makespan": INF}},
        r"^reward_weights\.makespan = inf must be a finite number$",
    ),
]


@pytest.mark.parametrize("env_id, kw, pattern", BAD_MAKE, ids=lambda v: repr(v)[:50])
def test_gym_make_refuses_unbounded_values(env_id, kw, pattern):
    with pytest.raises(ConfigError, match=pattern) as e:
        gym.make(env_id, **kw)
    one_line(e)


def test_mig_bounds_the_generators_own_job_count():
    from gpu_sched_env.mig.workload import MIG_EXPERIMENT_CONFIG

    with pytest.raises(ConfigError, match=r"^generator\.numberOfJobs = 1000000000 is out of range"):
        gym.make("MIG-v0", generator={**MIG_EXPERIMENT_CONFIG, "numberOfJobs": 10**9})


def test_rewards_at_the_limits_stay_finite_in_float32():
    """The largest scale and weights the ranges allow: a day's rewards are finite and finite as float32."""
    env = gym.make("CGRSP-v0", n_jobs=40, reward_scale=1e3, alpha1=1e9, alpha2=1e9, reward="deadline")
    env.reset(seed=0)
    rewards, done = [], False
    while not done:
        _, r, done, _, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[-1]))  # always wait where legal
        rewards.append(r)
    assert all(math.isfinite(r) for r in rewards) and np.isfinite(np.float32(rewards)).all()
    assert min(rewards) < -1e9  # the limits are reached: the check could fail


# ----------------------------------------------------------------------------- the command line
def _cli(args: list[str]) -> int:
    from gpu_sched_env.cli import main

    try:
        return main(args)
    except SystemExit as e:
        return e.code


@pytest.mark.parametrize("extra", [[], ["--param", "stock_process=markov"]], ids=["fresh", "markov"])
def test_compare_refuses_a_tiny_dwell_in_one_line(tmp_path, capsys, extra):
    rc = _cli(["compare", "--seeds", "1", "--policies", "fifo", *extra, "--param", "stock_dwell_s=1e-3",
               "--out", str(tmp_path / "out"), "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err[-1].startswith("gpu-sched compare: error: stock_dwell_s = 0.001")
    assert ("out of range" in err[-1]) == bool(extra)  # under the fresh process a dwell is refused as unused
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ----------------------------------------------------------------------------- the JAX twin
@pytest.fixture(scope="module")
def x64():
    if jax is None:
        pytest.skip("needs the jax extra")
    with jax.enable_x64(True):  # int64 actions (2**32 + 1) reach the env whole, as in tests/cgrsp/jax
        yield


@pytest.fixture(scope="module")
def env(x64):
    from tests.cgrsp.jax.helpers import env_for

    return env_for("hectic", "fresh")  # the env tests/cgrsp/jax builds: its programs are shared


@pytest.mark.parametrize(
    "field, value, pattern",
    [
        ("arrival_rate", NAN, r"^params\.arrival_rate = nan is not allowed; allowed: a finite number$"),
        ("runtime_sigma", NAN, r"^params\.runtime_sigma = nan is not allowed; allowed: a finite number$"),
        ("runtime_sigma", 50.0, r"^params\.runtime_sigma = 50\.0 is not allowed; allowed: \[0, 3\]$"),
        ("arrival_rate", 0.0, r"^params\.arrival_rate = 0\.0 is not allowed; allowed: \(0, inf\]$"),
        ("reward_scale", 1e308, r"^params\.reward_scale = 1e\+308 is not allowed; allowed: \[1e-09, 1000\]$"),
        ("wbar", INF, r"^params\.wbar\[0, 0\] = inf is not allowed; allowed: a finite number$"),
        ("lam_knots", NAN, r"^params\.lam_knots\[0, 0\] = nan is not allowed; allowed: a finite number$"),
    ],
)
def test_jax_evaluate_and_rollout_refuse_bad_params_before_tracing(env, field, value, pattern):
    from gpu_sched_env.cgrsp.jax import RULES, evaluate, rollout

    p = env.default_params
    bad = p.replace(**{field: jnp.full_like(getattr(p, field), value)})
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    with pytest.raises(ConfigError, match=pattern) as e:
        evaluate(env, RULES["spt"], keys, bad)
    one_line(e)
    with pytest.raises(ConfigError, match=pattern):
        rollout(env, RULES["spt"], None, bad)  # refused before the state is even looked at
    with pytest.raises(ConfigError, match=pattern):
        env.check_params(bad)
    assert env.check_params(p) is p  # a config's own params pass


def test_jax_mixed_params_are_checked_per_regime(x64):
    from gpu_sched_env.cgrsp.jax import JaxCGRSP, check_params
    from tests.cgrsp.jax.helpers import joint_heads

    env = JaxCGRSP.mixed(joint_heads("hectic"), stocks=("fresh",), days={"hectic": 1.0, "quiet": 1.0})
    p = env.default_params
    check_params(p)
    table = p.mix.table.replace(arrival_rate=p.mix.table.arrival_rate.at[1].set(jnp.nan))
    with pytest.raises(ConfigError, match=r"^params\.mix\.table\.arrival_rate\[1\] = nan is not allowed"):
        check_params(p.replace(mix=p.mix.replace(table=table)))


def test_jax_evaluate_raises_on_a_day_that_ends_with_jobs_not_completed(env, monkeypatch):
    """The day program's result is replaced by one whose day is done with 0 of N jobs (what NaN params played)."""
    from gpu_sched_env.cgrsp.jax import RULES, IncompleteDayError, evaluate, rules

    n = env.spec.n
    fake = {k: jnp.zeros(2) for k in ("mean_wait_min", "miss", "miss_pct", "tight_miss", "cost_usd", "n_invalid")}
    fake.update(completed=jnp.array([n, 0]), done=jnp.array([True, True]), n_jobs=jnp.array([n, n]))
    monkeypatch.setattr(rules, "_day_metrics", lambda *a: lambda *b: fake)
    with pytest.raises(
        IncompleteDayError,
        match=rf"^rules\.evaluate of 'spt': 1 of 2 days ended with jobs not completed \(day 1: 0 of {n}\)",
    ):
        evaluate(env, RULES["spt"], jax.random.split(jax.random.PRNGKey(0), 2))
    fake["completed"] = jnp.array([n, n])
    assert set(evaluate(env, RULES["spt"], jax.random.split(jax.random.PRNGKey(0), 2))) == set(fake) - {
        "done",
        "n_jobs",
    }


def test_check_complete_reads_each_days_own_job_count():
    from gpu_sched_env.cgrsp.jax.rules import IncompleteDayError, check_complete

    check_complete([True, False], [6, 0], [6, 950], "x")  # a day not done is the stall check's business
    with pytest.raises(IncompleteDayError, match=r"^x: 1 of 2 days .* \(day 1: 5 of 6\)"):
        check_complete([True, True], [950, 5], [950, 6], "x")


@pytest.mark.slow
def test_jax_nan_params_really_end_a_day_early_and_evaluate_says_so(env, monkeypatch):
    """With the params check bypassed, NaN arrival rates play a done day of 0 jobs: the completion check sees it."""
    from gpu_sched_env.cgrsp.jax import RULES, IncompleteDayError, evaluate, rules

    monkeypatch.setattr(rules, "check_params", lambda p: p)
    p = env.default_params
    bad = p.replace(arrival_rate=jnp.full_like(p.arrival_rate, NAN))
    with pytest.raises(IncompleteDayError, match="ended with jobs not completed"):
        evaluate(env, RULES["spt"], jax.random.split(jax.random.PRNGKey(0), 2), bad)


@pytest.mark.parametrize(
    "action, dtype",
    [
        (2**32 + 1, "int64"),
        (-1, "int64"),
        (-(2**40), "int64"),
        (2**31 + 1, "uint32"),
        (2**64 - 1, "uint64"),
        (1.7, "float64"),
        (NAN, "float64"),
        (INF, "float32"),
        (1.0, "float32"),  # a float is no action index, whole or not (CGRSP-v0 refuses it too)
        (True, "bool"),
    ],
    ids=lambda v: repr(v),
)
def test_jax_actions_outside_the_space_are_flagged_never_wrapped(x64, action, dtype):
    from gpu_sched_env.cgrsp.jax.legal import legalise

    mask = jnp.array([False, True, True, False, True])  # 1 is legal, and wrapping/truncating would give 1 (or 0/4)
    a, invalid = jax.jit(legalise)(mask, jnp.asarray(action, dtype))
    assert bool(invalid) and int(a) == 4  # the substitute: wait (the last action), legal here
    a, invalid = jax.jit(legalise)(mask[:4].at[3].set(False), jnp.asarray(action, dtype))
    assert bool(invalid) and int(a) == 1  # wait illegal: the lowest legal action
    a, invalid = jax.jit(legalise)(
        mask, jnp.asarray(1, dtype if dtype.startswith("int") or dtype.startswith("uint") else "int64")
    )
    assert not bool(invalid) and int(a) == 1  # a legal integer in a wide dtype plays as itself


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint64"])
def test_jax_legal_integer_actions_play_as_themselves_in_any_integer_dtype(x64, dtype):
    from gpu_sched_env.cgrsp.jax.legal import legalise

    mask = jnp.array([True, False, True, True])
    for a in range(4):
        got, invalid = jax.jit(legalise)(mask, jnp.asarray(a, dtype))
        assert (int(got), bool(invalid)) == ((a, False) if mask[a] else (3, True))


def test_jax_env_step_flags_and_counts_a_float_and_a_huge_action(env):
    """Through the env: 1.7 and 2**32 + 1 play the substitute (wait here), flagged and counted, as wait itself plays."""
    p = env.default_params
    _, s = env.reset(jax.random.PRNGKey(1), p)
    mask = np.asarray(env.action_mask(s, p))
    assert mask[1] and mask[-1]  # truncating 1.7 or wrapping 2**32 + 1 would dispatch (action 1)
    want = env.step(jax.random.PRNGKey(0), s, np.int64(env.wait_action), p)
    for bad in (np.float64(1.7), np.int64(2**32 + 1)):
        _, s2, r, _, info = env.step(jax.random.PRNGKey(0), s, bad, p)
        assert bool(info["invalid_action"]) and int(info["n_invalid"]) == int(s2.n_invalid) == 1
        assert float(r) == float(want[2]) and float(s2.t) == float(want[1].t) and int(info["job"]) == -1


def test_jax_checked_mode_names_the_action_as_given(x64):
    from gpu_sched_env.cgrsp.jax.legal import why_illegal

    mask, rows, slot_job = np.array([True, False, True]), np.array([True]), np.array([-1, 3])
    assert why_illegal(2, "window position", np.float64(1.7), mask, rows, slot_job).startswith(
        "action 1.7 is not an action index: the actions are the integers 0 … 2"
    )
    assert "nan is not an action index" in why_illegal(2, "window position", np.float64(NAN), mask, rows, slot_job)
    assert why_illegal(2, "window position", np.int64(2**32 + 1), mask, rows, slot_job).startswith(
        "action 4294967297 is out of range"
    )
