"""``python -m studies hgsp-report --part tasks1`` (studies.hgsp.tasks1) on a tiny budget: its tables and docs block."""

import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.core.errors import ConfigError


def _diagnose_module():
    from studies.hgsp import tasks1

    return tasks1


def test_diagnose_script_tiny_budget(tmp_path):
    mod = _diagnose_module()
    doc = tmp_path / "doc.md"
    doc.write_text("a\n<!-- hgsp-diagnose-tasks1:start -->\nold\n<!-- hgsp-diagnose-tasks1:end -->\nb\n")
    out = tmp_path / "diag"
    assert (
        mod.main(["--seeds", "1", "--n", "200", "--sa-iters", "2", "--out", str(out), "--update-docs", str(doc)]) == 0
    )
    for k in ("slack", "scan", "classes", "load"):
        assert (out / f"{k}.csv").is_file()
    slack = pd.read_csv(out / "slack.csv")
    # the re-fitted row hits the published FIFO DMR up to one task in 200; the old slack misses more
    assert slack["FIFO DMR %"].iloc[2] == pytest.approx(mod.TARGET_DMR, abs=100 / 200)
    assert slack["FIFO DMR %"].iloc[0] > slack["FIFO DMR %"].iloc[2]
    scan = pd.read_csv(out / "scan.csv")
    assert len(scan) == len(mod.MEMORY_MODELS) * len(mod.DEADLINE_MODELS)
    assert np.allclose(scan["FIFO DMR %"], mod.TARGET_DMR, atol=100 / 200)
    text = doc.read_text()
    assert "old" not in text and "Where Greedy loses" in text and text.endswith("end -->\nb\n")
    with pytest.raises(ConfigError, match="--seeds = 0"):
        mod.main(["--seeds", "0", "--out", str(out)])
