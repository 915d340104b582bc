"""Priority and run-length histograms of generated job sets against the configured distributions.

:func:`attr_pmf` turns a config's integer attribute (Fixed, Uniform, Normal with the
config's ``rounding`` and the floor of 1) into its exact probability mass function;
:func:`gof` tests counts against it (χ² goodness of fit, sparse tail cells pooled);
:func:`histogram_figure` draws the histograms of the Java tool's test config (the study's
generator settings; beside the published file when present) and of the Part B preset.

Command line (``python -m studies mig-experiment --part histograms``)::

    .venv/bin/python -m studies mig-experiment --part histograms --jobs 1000 --sets 100 \
        --out docs/figures/mig_histograms.png
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.mig.generator import (
    NormalisedFileWarning,
    generate,
    load_config,
    load_jobs,
    next_primes,
)
from gpu_sched_env.mig.generator.config import AttrSpec
from gpu_sched_env.mig.generator.distributions import Normal, Uniform
from gpu_sched_env.mig.workload import JAVA_TEST_CONFIG, mig_experiment_config

FLOOR = 1  # run length and priority are floored at 1 (generator rule)


def attr_pmf(spec: AttrSpec, rounding: str, floor: int = FLOOR) -> dict[int, float]:
    """Exact pmf {value: probability} of an integer attribute as the generator draws it."""
    if spec.kind == "fixed":
        return {int(spec.value): 1.0}
    d = spec.dist
    if isinstance(d, Uniform):
        ks = range(int(d.lo), int(d.hi) + 1)
        return {k: 1.0 / len(ks) for k in ks}
    if isinstance(d, Normal):
        lo, hi = int(np.floor(d.mu - 8 * d.sd)) - 1, int(np.ceil(d.mu + 8 * d.sd)) + 1
        cdf = lambda x: stats.norm.cdf(x, d.mu, d.sd)  # noqa: E731
        pmf: dict[int, float] = {}
        for k in range(lo, hi + 1):
            if rounding == "truncate":  # trunc toward zero: k>0 from [k, k+1), 0 from (-1, 1)
                a, b = (k, k + 1) if k > 0 else ((k - 1, k) if k < 0 else (-1, 1))
            else:
                a, b = k - 0.5, k + 0.5
            p = cdf(b) - cdf(a)
            kk = max(k, floor)
            pmf[kk] = pmf.get(kk, 0.0) + p
        return {k: p for k, p in sorted(pmf.items()) if p > 1e-12}
    raise ConfigError(f"distribution {type(d).__name__}: allowed for a histogram check: Fixed, Uniform, Normal")


def gof(values: np.ndarray, pmf: dict[int, float], min_expected: float = 5.0) -> float:
    """χ² goodness-of-fit p-value of integer ``values`` against ``pmf`` (1.0 for one cell).

    Cells with expected count < ``min_expected`` are pooled into their neighbour; values
    outside the pmf's support make the p-value 0.
    """
    values = np.asarray(values)
    keys = sorted(pmf)
    if np.any(~np.isin(values, keys)):
        return 0.0
    obs = np.array([np.sum(values == k) for k in keys], dtype=float)
    exp = np.array([pmf[k] for k in keys]) * values.size
    while exp.size > 2 and exp.min() < min_expected:
        i = int(np.argmin(exp))
        j = i - 1 if i > 0 else 1
        obs[j] += obs[i]
        exp[j] += exp[i]
        obs, exp = np.delete(obs, i), np.delete(exp, i)
    if exp.size < 2:
        return 1.0
    exp *= obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def _java_config():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        return load_config(JAVA_TEST_CONFIG)


def histogram_data(
    n_jobs: int, n_sets: int, seed: int = 41, published: str | Path | None = None
) -> list[dict[str, Any]]:
    """Four panels (attribute, samples, pmf, p-value) of priority and run length.

    For the Java test config (``n_jobs`` jobs, ``seed``) and the Part B preset (``n_sets``
    data sets of 50 on the first prime seeds).
    """
    for name, v in (("n_jobs", n_jobs), ("n_sets", n_sets)):
        if int(v) < 1:
            raise ConfigError(f"{name} = {v}: allowed: >= 1")
    java = _java_config()
    js = generate(java, seed, n_jobs)
    ref = load_jobs(published) if published is not None and Path(published).is_file() else None
    partb = mig_experiment_config()
    sets = [generate(partb, p) for p in next_primes(n_sets)]
    panels = []
    for label, cfg, samples, refs in (
        (f"Java test config ({n_jobs} jobs, seed {seed})", java, [js], ref),
        (f"Part B preset ({n_sets} data sets x 50 jobs)", partb, sets, None),
    ):
        for attr, spec in (("priority", cfg.priority), ("run length [min]", cfg.run_length)):
            col = "priority" if attr == "priority" else "lengths"
            vals = np.concatenate([getattr(s, col) for s in samples])
            pmf = attr_pmf(spec, cfg.rounding)
            panels.append(
                {
                    "config": label,
                    "attribute": attr,
                    "values": vals,
                    "pmf": pmf,
                    "p": gof(vals, pmf),
                    "published": None if refs is None else getattr(refs, col),
                    "published_p": None if refs is None else gof(getattr(refs, col), pmf),
                }
            )
    return panels


def histogram_figure(panels: list[dict[str, Any]], out_path: str | Path) -> Path:
    """2×2 figure: generated share per value (bars), published file (bars), configured pmf (dots)."""
    import matplotlib.pyplot as plt

    from gpu_sched_env.core.plotting import save

    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for ax, pn in zip(axes.ravel(), panels, strict=True):
        shown = {k for k, p in pn["pmf"].items() if p >= 1e-3}  # drop the invisible Normal tail
        seen = np.unique(pn["values"] if pn["published"] is None else np.r_[pn["values"], pn["published"]])
        keys = sorted(shown | set(seen.tolist()))
        x = np.arange(len(keys))
        share = [np.mean(pn["values"] == k) for k in keys]
        w = 0.4 if pn["published"] is not None else 0.7
        ax.bar(
            x - (w / 2 if pn["published"] is not None else 0),
            share,
            width=w,
            label=f"ours (n = {pn['values'].size}; χ² p = {pn['p']:.2g})",
        )
        if pn["published"] is not None:
            pub = [np.mean(pn["published"] == k) for k in keys]
            ax.bar(
                x + w / 2,
                pub,
                width=w,
                color="tab:orange",
                label=f"published file (n = {pn['published'].size}; χ² p = {pn['published_p']:.2g})",
            )
        ax.plot(
            x,
            [pn["pmf"].get(k, 0.0) for k in keys],
            "k_",
            markersize=18,
            mew=2.5,
            label="configured distribution (exact pmf)",
        )
        ax.set_xticks(x, [str(k) for k in keys])
        ax.set_xlabel(pn["attribute"])
        ax.set_ylabel("share of jobs")
        ax.set_title(pn["config"], fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, out_path)


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
