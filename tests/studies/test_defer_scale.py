"""``python -m studies diagnose defer-scale``: the scale picked on selection seeds, paired on test seeds."""

import pandas as pd
import pytest

from studies.cgrsp import defer_scale as ds


def test_pick_takes_the_fewest_misses_then_the_lowest_wait():
    sel = pd.DataFrame(
        {
            "scale": [0.5, 0.5, 1.0, 1.0, 2.0, 2.0],
            "miss_pct": [0.1, 0.1, 0.0, 0.0, 0.0, 0.0],
            "mean_wait_min": [1.0, 1.0, 3.0, 3.0, 2.0, 2.0],
        }
    )
    assert ds.pick(sel) == 2.0
    tied = sel.assign(mean_wait_min=2.0, miss_pct=0.0)
    assert ds.pick(tied) == 1.0  # a knob that changes nothing stays at its default


def test_a_small_run_pairs_the_chosen_scale_with_the_default():
    r = ds.row("surge", "fresh", 3, 3, [0.75, 1.0], workers=1)
    assert r["chosen"] in (0.75, 1.0) and r["day"] == "surge"
    if r["chosen"] == 1.0:
        assert r["diff"] == 0.0
    assert "0.75:" in r["selection"] and "1:" in r["selection"]
    assert "| surge | fresh |" in ds.markdown([r], 3, 3)


def test_bad_scales_are_refused():
    with pytest.raises(SystemExit):
        ds.main(["--scales", "0", "1"])
