"""Priority and run-length histograms of the generator against the configured distributions.

Top row: the Java tool's test config (the study's generator settings: priority Uniform 1-5,
run length Normal(5, 2) truncated, floor 1), our generator beside the published
``test_jobs.json`` when present. Bottom row: the Part B preset (equal priority, run length
Uniform 1-10) over data sets with successive prime seeds. Each panel gives the χ² p-value
against the exact pmf of the configured distribution.

    .venv/bin/python scripts/mig_histograms.py --jobs 1000 --sets 100 --out docs/figures/mig_histograms.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_sched_env.mig.histograms import histogram_data, histogram_figure

PUBLISHED = Path(__file__).resolve().parents[2] / "../shared/data/job-generator/test_jobs.json"


def main(argv: list[str] | None = None) -> int:
    """Print the χ² p-values and write the histogram figure; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1000, help="jobs from the Java test config (default 1000)")
    ap.add_argument("--sets", type=int, default=100, help="Part B data sets of 50 jobs (default 100)")
    ap.add_argument("--seed", type=int, default=41, help="seed for the Java test config (default 41, its own)")
    ap.add_argument("--published", type=Path, default=PUBLISHED, help="the published test_jobs.json (optional)")
    ap.add_argument("--out", type=Path, default=Path("docs/figures/mig_histograms.png"))
    a = ap.parse_args(argv)
    panels = histogram_data(a.jobs, a.sets, a.seed, a.published)
    for pn in panels:
        pub = "" if pn["published_p"] is None else f"; published file p = {pn['published_p']:.3g}"
        print(f"{pn['config']}: {pn['attribute']}: chi2 p = {pn['p']:.3g}{pub}")
    print("figure:", histogram_figure(panels, a.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
