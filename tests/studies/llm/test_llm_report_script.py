"""studies.llm.cli (`python -m studies llm-report`, python -m studies llm-report).

FIFO vs WSRPT on the discriminating workload, both engines, written atomically.
"""

import json

import pandas as pd

from studies.llm.cli import main


def test_llm_report_on_the_discriminating_workload(tmp_path, capsys):
    out = tmp_path / "llm"
    assert main(["--workloads", "discriminating", "--out", str(out)]) == 0
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 4 and set(df.engine) == {"discrete", "event"} and set(df.policy) == {"fifo", "wsrpt"}
    by = df.set_index(["engine", "policy"])
    for engine in ("discrete", "event"):
        # the workload is built so that weighted shortest remaining time beats FIFO on weighted wait
        assert by.loc[(engine, "wsrpt"), "weighted_wait"] < by.loc[(engine, "fifo"), "weighted_wait"]
        assert by.loc[(engine, "fifo"), "weighted_wait_vs_fifo_pct"] == 0.0
        assert by.loc[(engine, "wsrpt"), "completed"] == by.loc[(engine, "fifo"), "completed"] > 0
    # the two engines agree on this workload
    cols = ["weighted_wait", "avg_wait", "makespan", "completed"]
    pd.testing.assert_frame_equal(by.loc["discrete", cols], by.loc["event", cols])
    assert json.loads((out / "config.json").read_text())["workloads"] == ["discriminating"]
    assert (out / "results.md").read_text().startswith("# LLM serving results")
    for name in ("comparison.png", "gantt_fifo.png", "gantt_wsrpt.png", "schedule_wsrpt.csv", "utilisation.png"):
        assert (out / "discriminating" / name).stat().st_size > 0
    assert "| discriminating | discrete | wsrpt |" in capsys.readouterr().out
