"""studies.hgsp.cli (`python -m studies hgsp-report`, python -m studies hgsp-report) on the tiny task set.

Tables written, SAGreedy's objective ≤ FIFO's, docs sections replaced.
"""

import pandas as pd

from studies.hgsp.cli import main


def test_hgsp_report_on_the_tiny_set(tmp_path, capsys):
    out = tmp_path / "hgsp"
    doc = tmp_path / "page.md"
    doc.write_text(
        "# page\n<!-- hgsp-published:start -->\nold\n<!-- hgsp-published:end -->\n"
        "<!-- hgsp-orderings:start -->\nold\n<!-- hgsp-orderings:end -->\ntail\n"
    )
    assert (
        main(
            [
                "--tasks",
                "tiny",
                "--clusters",
                "small",
                "--sa-iters",
                "20",
                "--calibration-seeds",
                "0",
                "--exact-seeds",
                "0",
                "--orderings-seeds",
                "2",
                "--no-figures",
                "--out",
                str(out),
                "--update-docs",
                str(doc),
            ]
        )
        == 0
    )
    res = pd.read_csv(out / "results.csv")
    assert set(res.policy) >= {"fifo", "greedy", "sagreedy"} and (res.n == 12).all()
    wt = res.set_index("policy").wt
    assert wt["sagreedy"] <= wt["fifo"]  # the annealer minimises weighted tardiness from FIFO's start
    orderings = pd.read_csv(out / "orderings.csv")
    assert set(orderings.seed) == {0, 1}
    published = pd.read_csv(out / "published.csv")
    assert set(published.status) <= {"faithful", "deviates", "missing"} and len(published) > 0
    text = doc.read_text()
    assert "old" not in text and text.startswith("# page\n") and text.endswith("tail\n")
    assert "| tiny | small | sagreedy |" in capsys.readouterr().out
