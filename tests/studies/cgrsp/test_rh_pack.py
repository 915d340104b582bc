"""RH's mean wait against the pack (spec §6) on the cells where its deferral used to leave it."""

import pytest

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid
from studies.cgrsp.programme.tables import RH_PACK_BOUNDS, published_rh_pack, rh_in_pack

SEEDS = range(5)
# the surge day and C_max 3, 7 and 10 on the hectic day: with rh_defer="expected" RH waited
# 0.01×, 2.4× and 11× the median policy at surge / C_max 7 / 10 (30 seeds)
CELLS = (("surge", {}), ("hectic", {"c_max": 3}), ("hectic", {"c_max": 7}), ("hectic", {"c_max": 10}))
CONTRACT = "RH / median (contract 7)"


def _ratios(cells=CELLS, column=CONTRACT, **extra):
    out = {}
    for day, params in cells:
        df = run_grid(POLICY_NAMES, SEEDS, day=day, params={**params, **extra}, executor="serial", progress=False)
        df["cell"] = f"{day} {params}"
        out.update(rh_in_pack(df, ["cell"])[column].to_dict())
    return out


def test_the_published_table_fixes_the_reading_of_the_pack():
    # the published hectic row is 0.83× the median of the other ten (outside 0.9–2×), 0.95× the
    # median of the seven contract policies: only the second reading is consistent with it
    r = published_rh_pack()
    assert r["other 10"] == pytest.approx(128.83 / ((153.94 + 154.77) / 2))
    assert r["contract 7"] == pytest.approx(128.83 / 135.21)
    lo, hi = RH_PACK_BOUNDS
    assert not lo <= r["other 10"] <= hi and lo <= r["contract 7"] <= hi


def test_rh_default_waits_inside_the_pack():
    lo, hi = RH_PACK_BOUNDS
    r = _ratios(CELLS[1:])  # hectic: the reservation is off at C_max 3 and 7 (ρ ≥ 0.95), on at 10 (ρ ≈ 0.72)
    assert all(lo <= v <= hi for v in r.values()), r
    bad = _ratios(CELLS[3:], rh_defer="expected")  # deferral leaves the pack: the check can fail
    assert not any(lo <= v <= hi for v in bad.values()), bad


def test_on_the_surge_day_only_the_reservation_takes_rh_below_the_pack():
    # ρ ≈ 0.29 < gate: the spec's reservation (rho_res = 1) holds the idle slot the loose jobs
    # leave, often a Low-stock one, and the next decision re-rolls its status; RH then waits
    # less than the pack (docs/results.md, rho and rhomarkov). Without it RH is inside.
    lo, hi = RH_PACK_BOUNDS
    (without,) = _ratios(CELLS[:1], rho_res=0).values()
    (default,) = _ratios(CELLS[:1]).values()
    assert lo <= without <= hi and default < lo, (without, default)
