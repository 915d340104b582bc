"""The documented commands run at their smallest budget: the table, and the process that runs them.

:data:`RUNS` holds one entry per command spelling the README and docs name (the spellings of
``tests/test_documented_commands.py``'s :func:`documented`): the argv after the door (``gpu-sched``
or ``python -m studies``) at the fewest seeds, days, jobs and steps the command accepts, and what the
run must leave behind: files (globs, each matching a non-empty file) and text on stdout.
``tests/test_documented_runs.py`` checks that the table and the pages name the same spellings;
``tests/test_documented_runs_{rules,learners}.py`` run the entries (``-m e2e``).

Placeholders in an argv, a file or a copy: ``{out}`` is the entry's own empty temporary folder,
``{run}`` a tiny trained run folder (``train.py``'s layout, made once per test module), ``{from}``
the ``{out}`` of the earlier entry of its batch it reads (``uses``: an exported actor, ablation folders). The
entries of one batch run one after another in one fresh Python process (:func:`child`): each is
dispatched through its door's table (:func:`gpu_sched_env.cli.main`, :func:`studies.commands.main`)
with its stdout and stderr in files of its own and a timeout of its own, and its exit status is
recorded, so each entry is judged on its own while the imports and JAX's compiled programs are
shared. Nothing is written into the checkout: every output goes under ``{out}`` or ``{run}``, and a
command that writes a page writes a copy of it there (``--update-docs``, ``--doc``, ``docs-graph --page``,
``--leaderboard``, ``experiments --docs``); the child notes every write into the checkout (an audit
hook) and each entry's test asserts there was none.

    .venv/bin/python tests/documented_runs.py "python -m studies bench scenarios --part edge" ~experiments  # ~: a part
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDIES = "python -m studies"
DOORS = ("gpu-sched", STUDIES)
FAST = ("--param", "n_jobs=25", "--executor", "serial", "--no-progress")  # the experiments' smallest day


@dataclass(frozen=True)
class Run:
    """One documented command at its smallest budget and what it must write."""

    argv: tuple[str, ...]  # after the door; starts with the command's words
    files: tuple[str, ...] = ()  # globs that must each match a non-empty file ({out}, {run})
    stdout: tuple[str, ...] = ()  # text its stdout must hold
    batch: str = "rules"  # the shared process it runs in (a batch's entries run in table order)
    needs_run: bool = False  # needs the tiny trained run folder {run}
    copy: tuple[tuple[str, str], ...] = ()  # (checkout path, path under {out}) copied there before it runs
    rewrites: bool = False  # it must rewrite each copied page, *.md (a generated block between the page's markers)
    stands_for: str = ""  # what a spelled word that is no literal argument stands for (``runs``: a run folder)
    timeout: float = 120.0  # [s] in its batch's process (a cold JAX compile cache: the JAX commands' minutes)
    xfail: str = ""  # the exact error, where its cause is outside studies/ (a strict xfail)
    uses: str = ""  # the spelling of an earlier entry of its batch whose {out} it reads as {from}


def experiment(name: str, *args: str, seeds: tuple[str, ...] = ("0",)) -> Run:
    """``python -m studies experiments NAME`` on 25-job days, one seed by default, its folder under {out}."""
    return Run(
        ("experiments", name, "--seeds", *seeds, *args, *FAST, "--out", "{out}"),
        files=(f"{{out}}/{name}/results.parquet", f"{{out}}/{name}/report.md", f"{{out}}/{name}/config.json"),
        stdout=(f"Results: {{out}}/{name}/",),
    )


def learner(*argv: str, **kw) -> Run:
    """An entry of the ``learners`` batch: a trained run folder or a ppo_jax training."""
    return Run(argv, batch="learners", **kw)


# fmt: off
# an exported actor of the joint design, parity's (its {out} is their {from}); two spellings in the docs
VERSUS_RULE_JAX = learner(
    "versus-rule", "--engine", "jax", "{from}/hectic_fresh_b64/seed0.npz", "--regime", "hectic_fresh", "--days", "2",
    uses="python -m studies parity",
    stdout=("2 selection days; diff = mode - rule", "rule_when"),
    timeout=400,
)

RUNS: dict[str, Run] = {
    # ======== batch "rules": the simulators' commands, the rules' studies, the benchmarks
    # ---- gpu-sched: the installed library's commands
    "gpu-sched": Run(("--help",), stdout=("usage: gpu-sched NAME", "compare")),
    "gpu-sched compare": Run(
        ("compare", "--day", "quiet", "--seeds", "1", "--policies", "fifo", "--executor", "serial", "--no-progress",
         "--out", "{out}"),
        files=("{out}/quiet/per_seed.csv", "{out}/quiet/summary.csv", "{out}/quiet/table.txt"),
        stdout=("Tables written to {out}/quiet/",),
    ),
    "gpu-sched evaluate": Run(  # the leaderboard's page, rebuilt from a copy of docs/leaderboard/*.json
        ("evaluate", "--leaderboard", "{out}/leaderboard"),
        copy=(("docs/leaderboard", "leaderboard"),),
        files=("{out}/leaderboard.md",),
        stdout=("written {out}/leaderboard.md",),
    ),
    "gpu-sched evaluate spt_rescue_defer_exp": Run(
        ("evaluate", "spt_rescue_defer_exp", "--quick", "--seeds", "2", "--workers", "1", "--out", "{out}"),
        files=("{out}/report.md", "{out}/report.json", "{out}/report.png"),
        stdout=("written {out}/report.json",),
    ),
    "gpu-sched generate-jobs": Run(
        ("generate-jobs", "conf/mig/test_config.yaml", "-o", "{out}/jobs.json", "--jobs", "5"),
        files=("{out}/jobs.json",),
        stdout=("wrote 5 jobs",),
    ),
    "gpu-sched trace": Run(
        ("trace", "--day", "quiet", "--param", "n_jobs=20", "--out", "{out}/trace.csv"),
        files=("{out}/trace.csv",),
        stdout=("20 jobs",),
    ),
    # ---- python -m studies: the research programme
    STUDIES: Run(("--help",), stdout=("usage: python -m studies NAME", "experiments")),
    "python -m studies experiments": experiment("single", "--policies", "rh", "--param", "rho_res=2"),  # --param knob
    "python -m studies bench": Run(("bench", "--help"), stdout=("usage: python -m studies bench NAME", "scenarios")),
    "python -m studies experiments all": Run(  # every experiment, the timing table and the results page
        ("experiments", "all", "--seeds", "0", "--policies", "fifo", *FAST, "--out", "{out}", "--docs",
         "{out}/docs"),
        files=("{out}/timing.csv", "{out}/month/results.parquet", "{out}/docs/results.md", "{out}/docs/figures/*.png"),
        stdout=("Results page: {out}/docs/results.md",),
        timeout=240,
    ),
    "python -m studies experiments report": Run(  # with RH: the results page's readings of RH in the pack
        ("experiments", "report", "--seeds", "0", "--policies", "fifo", "rh", *FAST, "--out", "{out}", "--docs",
         "{out}/docs"),
        files=("{out}/docs/results.md", "{out}/docs/figures/*.png"),
        stdout=("Results page: {out}/docs/results.md",),
        timeout=240,
    ),
    "python -m studies experiments single": experiment("single", "--policies", "fifo"),
    "python -m studies experiments validation": experiment("validation", "--policies", "fifo", "rh",
                                                           seeds=("0", "1")),  # paired tests: two seeds
    "python -m studies experiments daytype": experiment("daytype", "--days", "quiet", "--policies", "fifo"),
    "python -m studies experiments tight": experiment("tight", "--values", "0.5", "--policies", "fifo"),
    "python -m studies experiments cmax": experiment("cmax", "--values", "3", "--policies", "fifo"),
    "python -m studies experiments theta": experiment("theta", "--values", "180", "--policies", "spt_rescue"),
    "python -m studies experiments crstar": experiment("crstar", "--values", "2.0", "--policies", "cadr"),
    "python -m studies experiments rho": experiment("rho", "--values", "1", "--days", "normal"),
    "python -m studies experiments rhomarkov": experiment("rhomarkov", "--values", "1", "--days", "normal"),
    "python -m studies experiments rhdefer": experiment("rhdefer", "--values", "never"),
    "python -m studies experiments rhplan": experiment("rhplan", "--values", "idle", "--days", "quiet"),
    "python -m studies experiments stock": experiment("stock", "--values", "900", "--days", "surge", "--policies",
                                                      "fifo"),
    "python -m studies experiments stockrh": experiment("stockrh", "--values", "900", "--days", "surge"),
    "python -m studies experiments objective": experiment("objective", "--w-cost", "0.5", "--ratios", "1",
                                                          "--policies", "fifo"),
    "python -m studies experiments month": experiment("month", "--n-days", "1", "--mix", "quiet=1", "--policies",
                                                      "fifo"),
    "python -m studies strong-rules": Run(
        ("strong-rules", "--seeds", "1", "--out", "{out}/strong_rules.md"),
        files=("{out}/strong_rules.md",),
        stdout=("written {out}/strong_rules.md",),
    ),
    "python -m studies persistence": Run(
        ("persistence", "--rule-seeds", "1", "--planner-seeds", "0", "--dwells", "fresh", "--days", "surge", "--out",
         "{out}/persistence"),
        files=("{out}/persistence.csv", "{out}/persistence.png"),
        stdout=("written {out}/persistence.csv",),
    ),
    "python -m studies reward": Run(
        ("reward", "--day", "quiet", "--seeds", "1"),
        stdout=("mean step reward",),
    ),
    "python -m studies reward --part alignment": Run(
        ("reward", "--part", "alignment", "--day", "quiet", "--seeds", "1", "--policies", "fifo"),
        stdout=("deadline", "capacity"),
    ),
    "python -m studies strong-rules --part rh-reservation": Run(
        ("strong-rules", "--part", "rh-reservation", "--day", "quiet", "--seeds", "1", "--rho-res", "0"),
        stdout=("rho_res=0",),
    ),
    "python -m studies headroom": Run(  # layer (a), one cell, one 40-job day
        ("headroom", "--layer", "a", "--day", "surge", "--stock", "fresh", "--c-max", "5", "--tight",
         "0.2", "--seeds", "1", "--param", "n_jobs=40", "--workers", "1", "--no-progress", "--store", "{out}/store"),
        files=("{out}/store/**/*",),
    ),
    "python -m studies hgsp-report --part tasks1": Run(  # its tables into a copy of docs/hgsp.md
        ("hgsp-report", "--part", "tasks1", "--seeds", "1", "--n", "10", "--sa-iters", "0", "--out", "{out}",
         "--update-docs", "{out}/hgsp.md"),
        copy=(("docs/hgsp.md", "hgsp.md"),),
        rewrites=True,
        files=("{out}/diagnose.md", "{out}/slack.csv", "{out}/scan.csv", "{out}/classes.csv", "{out}/load.csv"),
        stdout=("wrote {out}",),
    ),
    "python -m studies hgsp-report": Run(  # the orderings tables into a copy of docs/hgsp.md
        ("hgsp-report", "--tasks", "tiny", "--clusters", "small", "--sa-iters", "2", "--calibration-seeds", "0",
         "--exact-seeds", "0", "--orderings-seeds", "1", "--no-figures", "--out", "{out}", "--update-docs",
         "{out}/hgsp.md"),
        copy=(("docs/hgsp.md", "hgsp.md"),),
        rewrites=True,
        files=("{out}/results.md", "{out}/results.csv", "{out}/orderings.csv", "{out}/published.csv"),
        stdout=("wrote {out}",),
    ),
    "python -m studies llm-report": Run(
        ("llm-report", "--workloads", "discriminating", "--out", "{out}"),
        files=("{out}/results.md", "{out}/results.csv", "{out}/discriminating/*"),
        stdout=("wrote {out}",),
    ),
    "python -m studies mig-experiment": Run(  # its block into a copy of docs/mig.md
        ("mig-experiment", "--n-sets", "1", "--n-jobs", "6", "--time-limit", "1", "--out", "{out}", "--no-figures",
         "--doc", "{out}/mig.md"),
        copy=(("docs/mig.md", "mig.md"),),
        rewrites=True,
        files=("{out}/results.csv", "{out}/summary.csv", "{out}/summary.md", "{out}/config.json"),
        stdout=("running 1", "doc: {out}/mig.md"),
    ),
    "python -m studies edge-experiment": Run(  # its tables into a copy of docs/edge.md
        ("edge-experiment", "--sizes", "5", "--seeds", "1", "--out", "{out}", "--no-ablation", "--noise-sigma", "0",
         "--sensitivity-seeds", "0", "--no-figures", "--update-docs", "{out}/edge.md"),
        copy=(("docs/edge.md", "edge.md"),),
        rewrites=True,
        files=("{out}/scaling.csv", "{out}/five_task.csv", "{out}/config.json", "{out}/command.txt"),
    ),
    "python -m studies mig-experiment --part histograms": Run(
        ("mig-experiment", "--part", "histograms", "--jobs", "10", "--sets", "1", "--out", "{out}/mig_histograms.png"),
        files=("{out}/mig_histograms.png",),
        stdout=("run length [min]: chi2 p =", "figure: {out}/mig_histograms.png"),
    ),
    "python -m studies strong-rules --part rule-fix": Run(
        ("strong-rules", "--part", "rule-fix", "--seeds", "1", "--days", "quiet", "--stocks", "fresh", "--out",
         "{out}/rule_fix.md"),
        files=("{out}/rule_fix.md",),
        stdout=("| quiet | fresh | both (the rule now) |",),
    ),
    "python -m studies strong-rules --part defer-scale": Run(
        ("strong-rules", "--part", "defer-scale", "--days", "quiet", "--stocks", "fresh", "--scales", "1",
         "--select-seeds", "2", "--test-seeds", "2", "--workers", "1", "--out", "{out}/defer_scale.md"),
        files=("{out}/defer_scale.md",),
        stdout=("| quiet",),
    ),
    "python -m studies headroom --part planner-calibration": Run(
        ("headroom", "--part", "planner-calibration", "--day", "hectic", "--stock", "fresh", "--seeds", "1",
         "--points", "1", "--futures", "2", "--horizons", "60", "--out", "{out}/calibration"),
        files=("{out}/calibration.csv", "{out}/calibration.png", "{out}/calibration.md"),
        stdout=("| fresh | 60 |",),
    ),
    "python -m studies reward --part scale": Run(
        ("reward", "--part", "scale", "--regime", "hectic_fresh", "--days", "1"),
        stdout=("spt_rescue_defer_exp on hectic_fresh", "shaping_mean"),
        timeout=400,
    ),
    "python -m studies reward --part regimes": Run(
        ("reward", "--part", "regimes", "--days", "1"),
        stdout=("return_std_over_pooled", "surge_D900"),
        timeout=400,
    ),
    "python -m studies tune-rules": Run(
        ("tune-rules", "--scenario", "llm", "--seeds", "1", "--out", "{out}/llm_tune.md"),
        files=("{out}/llm_tune.md",),
        stdout=("llm: 1 selection seeds from 10000",),
    ),
    "python -m studies learners": Run(  # two seeds' run files of MIG-v0 and their stored reports
        (
            "learners", "--scenario", "mig", "--runs", "{out}/runs/seed0", "{out}/runs/seed1",
            "--reports", "{out}/reports/ppo__0_ppo_mig_seed0_.json", "{out}/reports/ppo__1_ppo_mig_seed1_.json",
            "--page", "{out}/learners_mig.md",
        ),  # fmt: skip
        copy=(("tests/mig/data/learners", "runs"), ("docs/leaderboard/mig", "reports")),
        files=("{out}/learners_mig.md", "{out}/figures/learners_mig.png"),
        stdout=("wrote {out}/learners_mig.md",),
    ),
    "python -m studies docs-graph": Run(  # rewrites a copy of the page (its freshness: tests/test_docs.py)
        ("docs-graph", "--page", "{out}/architecture.md"),
        copy=(("docs/architecture.md", "architecture.md"),),
        files=("{out}/architecture.md",),
        stdout=("wrote the import graph into {out}/architecture.md",),
    ),
    # ---- the benchmarks (figures on stdout)
    "python -m studies bench sim": Run(  # the scaling table (its other parts are fixed 30-seed grids)
        ("bench", "sim", "--scale", "--scaling-max", "1000", "--scale-reps", "1", "--policies", "fifo"),
        stdout=("== 3. Scaling", "fifo"),
    ),
    "python -m studies bench env": Run(
        ("bench", "env", "--days", "quiet", "--steps", "10", "--agents", "fifo", "--out", "{out}/bench_env.csv",
         "--gantt", "{out}/gantt.png", "--gantt-hours", "0.5"),
        files=("{out}/bench_env.csv", "{out}/gantt.png"),
        stdout=("CartPole-v1", "wrote {out}/bench_env.csv"),
    ),
    "python -m studies bench scenarios --part edge": Run(
        ("bench", "scenarios", "--part", "edge", "--tasks", "3", "--repeats", "1", "--time-limit", "0.2"),
        stdout=("bench_edge: 3 tasks", "membatch"),
    ),
    "python -m studies bench scenarios --part hgsp": Run(
        ("bench", "scenarios", "--part", "hgsp", "--tasks", "tiny", "--repeats", "1", "--sa-iters", "1"),
        stdout=("sagreedy (release-aware)",),
    ),
    "python -m studies bench scenarios --part mig": Run(
        ("bench", "scenarios", "--part", "mig", "--jobs", "100", "--seeds", "1", "--time-limit", "0.5", "--reps", "1"),
        stdout=("# Generator, 100 jobs", "ratio CP-SAT / Best-Fit"),
    ),
    "python -m studies bench env --part train": Run(  # its rollouts are 1024 steps whatever --steps says
        ("bench", "env", "--part", "train", "--steps", "1", "--n-envs", "1", "--day", "quiet"),
        stdout=("InvalidActionEnvDiscrete", "joint mode, K=16"),
    ),
    "python -m studies bench jax": Run(
        ("bench", "jax", "--day", "quiet", "--batch", "2", "--env-steps", "2", "--ref-steps", "10", "--ppo-updates",
         "1", "--ppo-envs", "2", "--ppo-n-steps", "8", "--sb3-steps", "64", "--json"),
        stdout=('"env_steps_per_s"', '"sb3_ppo_fps"'),  # its --json line
        timeout=400,
    ),
    "python -m studies bench jax --part ab": Run(  # the commit read by `git archive`: nothing in the checkout changes
        ("bench", "jax", "--part", "ab", "--old", "HEAD", "--envs", "2", "--steps", "2", "--reps", "1"),
        stdout=("new env, random_legal", '"old": "HEAD"'),
        timeout=400,
    ),
    "python -m studies bench jax --part seeds": Run(  # one update of the shipped n_envs x n_steps
        ("bench", "jax", "--part", "seeds", "--budget", "8192", "--seeds", "1"),
        stdout=('"vmap_fps_1"',),
        timeout=400,
    ),
    "python -m studies bench sim --part trace-load": Run(  # a small log, one load per reader (each a fresh process)
        ("bench", "sim", "--part", "trace-load", "--rows", "2000", "--reps", "1"),
        stdout=("Trace.load, pyarrow (new)", "parsed jobs identical (old vs new, every run): yes"),
    ),
    "python -m studies bench jax --part days": Run(
        ("bench", "jax", "--part", "days", "--day", "quiet", "--days", "2", "--chunks", "1", "--reps", "1"),
        stdout=("2 quiet days per call", '"rows": ['),
        timeout=400,
    ),
    "python -m studies bench jax --part illegal": Run(
        ("bench", "jax", "--part", "illegal", "--day", "quiet", "--days", "1", "--share", "0.5", "--json"),
        stdout=('"lost_jobs": 0',),
        timeout=400,
    ),
    # ======== batch "learners": a tiny trained run folder ({run}), the ppo_jax studies
    "gpu-sched evaluate runs": learner(
        "evaluate", "{run}", "--quick", "--seeds", "2", "--workers", "1", "--out", "{out}",
        needs_run=True,
        stands_for="runs/...: a run folder of train.py",
        files=("{out}/report.md", "{out}/report.json", "{out}/report.png"),
        stdout=("written {out}/report.json",),
    ),
    "python -m studies versus-rule --part policy": learner(
        "versus-rule", "--part", "policy", "{run}", "--model", "best_model.zip", "--seeds", "1",
        needs_run=True,
        stdout=("argmax", "factored", "sampled"),
    ),
    "python -m studies versus-rule --part policy runs": learner(
        "versus-rule", "--part", "policy", "{run}", "--model", "best_model.zip", "--seeds", "1",
        needs_run=True,
        stands_for="runs/...: a run folder of train.py",
        stdout=("argmax", "factored", "sampled"),
    ),
    "python -m studies versus-rule": learner(
        "versus-rule", "{run}", "--seeds", "1", "--out", "{out}/versus_rule.csv",
        needs_run=True,
        files=("{out}/versus_rule.csv",),
        stdout=("rule: spt_rescue_defer_exp", "when_disagree"),
    ),
    "python -m studies versus-rule --part design-cost": learner(
        "versus-rule", "--part", "design-cost", "{run}", "--day", "quiet", "--seeds", "1",
        needs_run=True,
        stdout=("simulate",),
    ),
    "python -m studies reward --part advantages": learner(
        "reward", "--part", "advantages", "--rollouts", "1", "--n-steps", "64", "--window", "4",
        stdout=("advantage",),
    ),
    "python -m studies generalise": learner(  # writes beside the run's model, as documented
        "generalise", "{run}", "--seeds", "2", "--settings", "normal",
        needs_run=True,
        files=("{run}/generalisation.md", "{run}/gen_normal.csv", "{run}/gen_normal_tests.csv"),
        stdout=("# Generalisation of",),
    ),
    "python -m studies generalise runs": learner(
        "generalise", "{run}", "--seeds", "2", "--settings", "normal",
        needs_run=True,
        stands_for="runs/...: a run folder of train.py",
        files=("{run}/generalisation.md", "{run}/gen_normal.csv", "{run}/gen_normal_tests.csv"),
        stdout=("# Generalisation of",),
    ),
    "python -m studies learner-table": learner(
        "learner-table", "{run}", "--out", "{out}/learners.csv",
        needs_run=True,
        files=("{out}/learners.csv",),
        stdout=("runs beat the strongest rule",),
    ),
    "python -m studies parity": learner(
        "parity", "--budget", "64", "--out", "{out}", "--regimes", "hectic_fresh", "--seeds", "0", "--jax-days", "2",
        "--confirm-days", "2", "--n-envs", "4", "--n-steps", "16", "--select-every", "0", "--workers", "1",
        files=("{out}/rows.csv", "{out}/table.md", "{out}/hectic_fresh_b64/seed0.npz"),
        timeout=400,
    ),
    "python -m studies results": learner(  # replaces parity_main in a copy of the store and rewrites the page
        "results", "--add", "{from}", "--as", "parity_main", "--replace", "--docs", "{out}",
        uses="python -m studies parity",
        copy=(("docs/results_ppo_jax.md", "results_ppo_jax.md"), ("docs/results", "results")),
        rewrites=True,
        files=("{out}/results/parity_main/rows.csv", "{out}/results/parity_main/commands.json"),
        stdout=("stored {out}/results/parity_main", "rewritten {out}/results_ppo_jax.md"),
    ),
    # ---- an exported actor of the joint design: parity's (its {out} is their {from})
    "python -m studies versus-rule --engine jax": VERSUS_RULE_JAX,
    "python -m studies versus-rule --engine jax runs": dataclasses.replace(
        VERSUS_RULE_JAX, stands_for="runs/...: an exported actor (.npz) of parity or ablation"
    ),
    "python -m studies versus-rule --part timing": learner(
        "versus-rule", "--part", "timing", "{from}/hectic_fresh_b64/seed0.npz", "--regime", "hectic_fresh",
        "--days", "1",
        uses="python -m studies parity",
        stdout=("over-wait (learner waits, rule dispatches)",),
        timeout=400,
    ),
    "python -m studies versus-rule --part misses": learner(
        "versus-rule", "--part", "misses", "{from}/hectic_fresh_b64/seed0.npz", "--regime", "hectic_fresh",
        "--days", "1",
        "--workers", "1", "--rows", "3",
        uses="python -m studies parity",
        stdout=("the tight jobs' slack at dispatch",),
        timeout=400,
    ),
    "python -m studies ablation": learner(
        "ablation", "--budget", "64", "--out", "{out}", "--regimes", "hectic_fresh", "--rows", "joint", "--seeds", "0",
        "--n-envs", "4", "--n-steps", "16", "--select-every", "64", "--select-days", "2", "--jax-days", "2",
        "--confirm-days", "0", "--workers", "1",
        files=("{out}/rows.csv", "{out}/table.md"),
        timeout=400,
    ),
    "python -m studies ablation --part items": learner(  # from the ablation's folder
        "ablation", "--part", "items", "--from", "{from}", "--out", "{out}/items.md",
        uses="python -m studies ablation",
        files=("{out}/items.md",),
        stdout=("Per regime and item switched",),
    ),
    "python -m studies generalist": learner(  # trains on fresh stock only; judged on the four regimes and a month
        "generalist", "--budget", "64", "--out", "{out}", "--seeds", "0", "--stock-mix", "fresh", "--jax-days", "2",
        "--confirm-days", "2", "--reps", "2", "--month-stocks", "fresh", "--n-envs", "4", "--n-steps", "16",
        "--select-every", "64", "--select-days", "2", "--workers", "1",  # generalist --part curves reads them
        files=("{out}/rows.csv", "{out}/month.csv", "{out}/table.md", "{out}/generalist_b64_sel64/seed0.npz",
               "{out}/generalist_b64_sel64/seed0_select.csv"),
        stdout=("written {out}/rows.csv",),
        timeout=600,
    ),
    "python -m studies generalist --part curves": learner(  # from the generalist's folder
        "generalist", "--part", "curves", "--from", "{from}", "--out", "{out}/curves.png",
        uses="python -m studies generalist",
        files=("{out}/curves.png",),
        stdout=("wrote {out}/curves.png", "learned / rule per regime"),
    ),
    "python -m studies tune": learner(
        "tune", "--out", "{out}", "--name", "tiny", "--budget", "64", "--every", "64", "--days", "2", "--",
        "train.n_envs=4", "algo.n_steps=16", "algo.batch_size=16",
        files=("{out}/curves.csv",),
        stdout=("64 steps", "learned", "rule"),
        timeout=400,
    ),
}
# fmt: on


def command_words(spelling: str) -> tuple[str, tuple[str, ...]]:
    """``(door, words)`` of a table key."""
    door = STUDIES if spelling.startswith(STUDIES) else "gpu-sched"
    return door, tuple(spelling[len(door) :].split())


def fill(text: str, places: dict[str, str]) -> str:
    """``text`` with its placeholders replaced (``{out}``, ``{run}``)."""
    for k, v in places.items():
        text = text.replace("{" + k + "}", v)
    return text


def places_of(spelling: str, outs: dict[str, Path], run: Path | None) -> dict[str, str]:
    """An entry's placeholders: its {out}, the {run} where one is made, the {out} of the entry it uses as {from}."""
    entry = RUNS[spelling]
    places = {"out": str(outs[spelling])} | ({"run": str(run)} if run is not None else {})
    return places | ({"from": str(outs[entry.uses])} if entry.uses else {})


def with_uses(names: list[str]) -> list[str]:
    """``names`` and the entries they use (and those use), in table order."""
    need, todo = set(), list(names)
    while todo:
        k = todo.pop()
        if k not in need:
            need.add(k)
            todo += [RUNS[k].uses] if RUNS[k].uses else []
    return [k for k in RUNS if k in need]


def prepare(spelling: str, outs: dict[str, Path], run: Path | None) -> dict:
    """The child's spec of one entry: its out folder made, its copies in place, its argv filled."""
    entry, out = RUNS[spelling], outs[spelling]
    out.mkdir(parents=True, exist_ok=True)
    places = places_of(spelling, outs, run)
    for src, dst in entry.copy:
        s, d = ROOT / src, out / dst
        shutil.copytree(s, d) if s.is_dir() else shutil.copy2(s, d)
    return {
        "key": spelling,
        "door": command_words(spelling)[0],
        "argv": [fill(a, places) for a in entry.argv],
        "timeout": entry.timeout,
        "log": str(out.parent / f"{out.name}.log"),
    }


WRITES: list[str] = []  # paths in the checkout the running command opened for writing (the audit hook's)


DIR_FD = {"os.rename": 2, "os.mkdir": 2, "os.remove": 1, "os.rmdir": 1}  # where each audit event's dir_fd args start


def _audit(event: str, args: tuple) -> None:
    """Note every write into the checkout (bytecode caches aside): open for writing, rename, mkdir, remove.

    Python's own calls only: a write from C (Arrow) or from a subprocess is not seen; git's status is the backstop.
    """
    if event == "open":
        path, mode, flags = args
        if not (isinstance(mode, str) and set(mode) & set("wax+")) and not (
            mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        ):
            return
        paths = [path]
    elif event in DIR_FD:  # a relative path beside a folder's descriptor (shutil.rmtree's) is in that folder
        fds = [a for a in args[DIR_FD[event] :] if a is not None]
        paths = [a for a in args[: 2 if event == "os.rename" else 1] if not fds or os.path.isabs(os.fsdecode(a))]
    else:
        return
    for path in paths:
        if isinstance(path, int) or path is None:
            continue
        full = os.path.abspath(os.fsdecode(os.fspath(path)))
        if full.startswith(f"{ROOT}{os.sep}") and "__pycache__" not in full:
            WRITES.append(full)


class CommandTimeout(BaseException):
    """Raised in the child when one command runs past its timeout."""


def _on_alarm(signum, frame):
    raise CommandTimeout


def run_one(item: dict) -> dict:
    """Dispatch one command in this process, its stdout and stderr in files of its own; its result."""
    import gpu_sched_env.cli
    import studies.commands

    main = studies.commands.main if item["door"] == STUDIES else gpu_sched_env.cli.main
    log = Path(item["log"])
    error = None
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    t0 = time.perf_counter()
    with open(log.with_suffix(".out"), "w") as out, open(log.with_suffix(".err"), "w") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.argv = [item["door"], *item["argv"]]
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, item["timeout"])
        try:
            rc = main(item["argv"])
        except CommandTimeout:
            rc, error = 124, f"timed out after {item['timeout']:g} s"
        except SystemExit as e:  # argparse's errors and --help
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if isinstance(e.code, str):
                error = e.code
        except BaseException:  # noqa: BLE001 (the traceback is the result)
            rc, error = 1, traceback.format_exc()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if error:
                print(error, file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    os.chdir(ROOT)
    try:
        import matplotlib.pyplot as plt

        plt.close("all")
    except ImportError:
        pass
    wrote, WRITES[:] = sorted(set(WRITES)), []
    return {"key": item["key"], "rc": int(rc or 0), "seconds": time.perf_counter() - t0, "error": error, "wrote": wrote}


def child(spec: Path, results: Path) -> None:
    """Run the entries of ``spec`` (JSON list) in turn; one JSON line per entry into ``results``."""
    sys.path[0] = str(ROOT)  # as ``python -m studies`` from the checkout's root (not tests/)
    os.chdir(ROOT)
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()  # as the suite's (tests/conftest.py): the JAX programs of an earlier run load, not compile
    sys.addaudithook(_audit)
    for item in json.loads(spec.read_text()):
        result = run_one(item)
        with results.open("a") as f:
            f.write(json.dumps(result) + "\n")


def run_batch(items: list[dict], folder: Path) -> dict[str, dict]:
    """Run ``items`` in one fresh Python process; ``key -> result`` (rc, seconds, error, stdout, stderr)."""
    spec, results = folder / "spec.json", folder / "results.jsonl"
    spec.write_text(json.dumps(items))
    results.unlink(missing_ok=True)
    env = {**os.environ, "GPU_SCHED_REFERENCE_CACHE": "0", "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    limit = sum(i["timeout"] for i in items) + 60
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(spec), str(results)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        tail, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        tail, _ = proc.communicate()
        tail = f"the batch ran past {limit:g} s and was killed\n{tail}"
    done = {}
    if results.is_file():
        done = {r["key"]: r for r in map(json.loads, results.read_text().splitlines())}
    for item in items:
        log = Path(item["log"])
        r = done.get(item["key"]) or {
            "rc": None,
            "seconds": 0.0,
            "wrote": [],
            "error": f"the shared process ended (status {proc.returncode}) before this command ended:\n{tail[-3000:]}",
        }
        r["stdout"] = log.with_suffix(".out").read_text() if log.with_suffix(".out").is_file() else ""
        r["stderr"] = log.with_suffix(".err").read_text() if log.with_suffix(".err").is_file() else ""
        done[item["key"]] = r
    return done


def make_tiny_run(run_dir: Path) -> Path:
    """A tiny trained run folder (tests/studies/cgrsp/test_diagnose.py's), its final evaluation on two seeds."""
    from tests.studies.cgrsp.test_diagnose import tiny_run

    return tiny_run(run_dir, "env.window=4", "train.final_eval_seeds=2")


def checkout_state() -> list[str]:
    """What git sees in docs/ and runs/, ignored folders included (each new folder one line, as git lists them)."""
    out = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--", "docs", "runs"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return sorted(out.splitlines())


@dataclass
class Results:
    """The results of a test module's batches: per spelling its result and placeholders; the checkout's state."""

    by_key: dict[str, dict]
    places: dict[str, dict[str, str]]
    before: list[str]
    after: list[str]


def run_batches(batches: tuple[str, ...], folder: Path) -> Results:
    """Every entry of ``batches``, each batch in one fresh process (a tiny run made first where one needs it)."""
    before = checkout_state()
    names = [k for k, r in RUNS.items() if r.batch in batches]
    run = make_tiny_run(folder / "run") if any(RUNS[k].needs_run for k in names) else None
    by_key, places = {}, {}
    for batch in batches:
        keys = [n for n in names if RUNS[n].batch == batch]
        outs = {k: folder / batch / f"cmd{i:02d}" for i, k in enumerate(keys)}
        items = [prepare(k, outs, run) for k in keys]
        places |= {k: places_of(k, outs, run) for k in keys}
        by_key |= run_batch(items, folder / batch)
    return Results(by_key, places, before, checkout_state())


def spellings_of(batches: tuple[str, ...]) -> list:
    """The table's spellings of ``batches`` as pytest params (an entry with ``xfail`` strictly expected to fail)."""
    import pytest

    return [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=r.xfail)) if r.xfail else k
        for k, r in RUNS.items()
        if r.batch in batches
    ]


def check(spelling: str, results: Results) -> None:
    """Exit status 0, every file the entry names (non-empty), every text on its stdout."""
    entry, r, places = RUNS[spelling], results.by_key[spelling], results.places[spelling]
    said = r["error"] or r["stderr"][-3000:]
    assert r["rc"] == 0, f"{spelling} {' '.join(entry.argv)}: exit status {r['rc']}\n{said}"
    for pattern in entry.files:
        path = fill(pattern, places)
        found = [Path(p) for p in glob.glob(path, recursive=True) if Path(p).is_file()]
        assert found, f"{spelling}: wrote no {path}\n{said}"
        assert all(p.stat().st_size > 0 for p in found), f"{spelling}: an empty file among {found}"
    assert r["wrote"] == [], f"{spelling}: wrote into the checkout: {r['wrote']}"
    pages = [(src, dst) for src, dst in entry.copy if src.endswith(".md")] if entry.rewrites else []
    for src, dst in pages:
        page = Path(places["out"]) / dst
        assert page.read_text() != (ROOT / src).read_text(), f"{spelling}: left its copy of {src} as it was"
    for text in entry.stdout:
        assert fill(text, places) in r["stdout"], (
            f"{spelling}: {fill(text, places)!r} not on stdout:\n{r['stdout'][-3000:]}"
        )


def by_hand(spellings: list[str]) -> int:
    """Run the named entries (``~TEXT``: those whose spelling holds TEXT; all when none) in one child process.

    Into a temporary folder; prints each entry's exit status, seconds and, where it failed, its error.
    """
    folder = Path(tempfile.mkdtemp(prefix="documented_runs_"))
    names = [k for k in RUNS if not spellings or any(a == k or (a[:1] == "~" and a[1:] in k) for a in spellings)]
    names = with_uses(names)  # an entry that reads another's {out} runs after it
    run = make_tiny_run(folder / "run") if any(RUNS[s].needs_run for s in names) else None
    outs = {s: folder / f"cmd{i:02d}" for i, s in enumerate(names)}
    items = [prepare(s, outs, run) for s in names]
    failed = 0
    for key, r in run_batch(items, folder).items():
        failed += r["rc"] != 0
        print(f"{r['rc']!s:>4} {r['seconds']:7.1f} s  {key}")
        if r["rc"] != 0:
            print("      " + (r["error"] or r["stderr"][-2000:]).replace("\n", "\n      "))
    print(f"outputs under {folder}")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # as tests/conftest.py
        raise SystemExit(by_hand(sys.argv[1:]))
