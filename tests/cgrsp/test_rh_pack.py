"""RH's mean wait stays inside the pack (spec §6) on the cells where its deferral used to leave it."""

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid
from gpu_sched_env.cgrsp.experiments.tables import RH_PACK_BOUNDS, rh_in_pack

SEEDS = range(5)
# the surge day and C_max 7 and 10 on the hectic day: with rh_defer="expected" RH waited 0.01×,
# 2.4× and 11× the median policy there (30 seeds)
CELLS = (("surge", {}), ("hectic", {"c_max": 7}), ("hectic", {"c_max": 10}))


def _ratios(cells=CELLS, **extra):
    out = {}
    for day, params in cells:
        df = run_grid(POLICY_NAMES, SEEDS, day=day, params={**params, **extra}, executor="serial", progress=False)
        df["cell"] = f"{day} {params}"
        out.update(rh_in_pack(df, ["cell"])["RH / median"].to_dict())
    return out


def test_rh_default_waits_inside_the_pack():
    lo, hi = RH_PACK_BOUNDS
    # the literal RH sits at the fast edge of the pack (30 seeds: 0.86-0.96× here; the published
    # hectic table itself puts RH at 0.84×), so the lower bound is relaxed to 0.8 for 5 seeds
    r = _ratios()
    assert all(lo - 0.1 <= v <= hi for v in r.values()), r
    bad = _ratios(CELLS[2:], rh_defer="expected")  # the old default leaves the pack: the check can fail
    assert not any(lo - 0.1 <= v <= hi for v in bad.values()), bad
