"""The research programme's command line: ``python -m studies COMMAND [ARGS...]`` (checkout only).

Run from the repository root: ``python -m`` puts the current folder on ``sys.path`` itself, so
``studies`` (not installed with the package) is found without any path edit. :data:`STUDIES` is
the one table of every study, benchmark and diagnostic, as data for the command machinery
(:mod:`gpu_sched_env.core.commands`): each entry names its ``module:main``, imported only when it
runs (PyTorch for ``bench train``, JAX for ``bench jax``), and ``COMMAND --help`` lists its options.
The installed library's commands (``compare``, ``trace``, ``evaluate``, ``generate-jobs``) are
``gpu-sched``'s, the other door.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gpu_sched_env.core.commands import Command, Group, dispatch

PROG = "python -m studies"

BENCH = Group(
    "benchmarks: sim, env, edge, hgsp, mig, train, jax, jax-days, illegal, jax-ab, ppo-jax-seeds, trace-load",
    {
        "sim": Command(
            "studies.bench.sim:main",
            "CGRSP simulator: jobs/s vs a bare heapq loop, the 30-seed grid, scaling to 100 000 jobs",
        ),
        "env": Command(
            "studies.bench.env:main", "CGRSP-v0 env steps/s vs CartPole-v1; rgb_array frame time (--render)"
        ),
        "edge": Command("studies.bench.edge:main", "edge schedulers' runtime on 100 tasks vs FCFS-LLF"),
        "hgsp": Command("studies.bench.hgsp:main", "HGSP FIFO / Greedy tasks/s and SAGreedy's wall time"),
        "mig": Command("studies.bench.mig:main", "MIG generator throughput and CP-SAT vs Best-Fit solve time"),
        "train": Command(
            "studies.bench.train:main", "MaskablePPO training frames/s on CGRSP-v0 vs InvalidActionEnvDiscrete"
        ),
        "jax": Command(
            "studies.bench.jax:main",
            "JAX env steps/s vs CGRSP-v0's; ppo_jax training frames/s vs MaskablePPO's (--json)",
        ),
        "jax-days": Command(
            "studies.bench.jax_days:main",
            "policies on many native JAX days: batches of 100 days (one compiled shape) vs one batch of all",
        ),
        "illegal": Command(
            "gpu_sched_env.cgrsp.jax.illegal:main",
            "the JAX env under illegal actions: native days with a share of masked-out actions, jobs lost (0 expected)",
        ),
        "jax-ab": Command(
            "studies.bench.jax_ab:main", "the JAX env's speed: an older commit's against the checkout's, in one process"
        ),
        "ppo-jax-seeds": Command(
            "studies.bench.ppo_jax_seeds:main",
            "ppo_jax frames/s: several seeds side by side (vmap) vs the same seeds in turn",
        ),
        "trace-load": Command(
            "studies.bench.trace_load:main",
            "a 1 000 000-row CGRSP job log: Trace.load's time and peak memory vs the pandas reader it replaced",
        ),
    },
    what="benchmark",
)

DIAGNOSE = Group(
    "diagnostics: rewards, learned policies vs rules, action designs, headroom, the planner, HGSP tasks1",
    {
        "advantages": Command(
            "studies.diagnose.advantages:main", "PPO's advantages at dispatch-or-idle, by stock level"
        ),
        "policy": Command(
            "studies.diagnose.policy:main", "why a trained CGRSP policy waits: argmax vs factored vs sampled"
        ),
        "reward": Command(
            "studies.diagnose.reward:main", "step reward of dispatch vs idle by stock (and a Monte-Carlo value)"
        ),
        "reward-scale": Command(
            "studies.diagnose.reward_scale:main", "the JAX step reward's shaping term vs the rest, by time of day"
        ),
        "regime-scale": Command(
            "studies.diagnose.regime_scale:main", "the judged regimes' reward and return scales under the rule"
        ),
        "reward-alignment": Command(
            "studies.diagnose.reward_alignment:main", "do reward presets rank heuristics as the objective?"
        ),
        "rh-reservation": Command("studies.diagnose.rh_reservation:main", "where RH's reservation puts loose jobs"),
        "design-cost": Command(
            "studies.diagnose.design_cost:main", "what an env's action design costs a rule against simulate()"
        ),
        "versus-rule": Command(
            "studies.diagnose.versus_rule:main", "does a learner lose to the strongest rule on when or on which job?"
        ),
        "versus-rule-jax": Command(
            "studies.diagnose.versus_rule_jax:main", "a ppo_jax actor vs the rule in JAX: when, which job, which slot"
        ),
        "timing-jax": Command(
            "studies.diagnose.timing_jax:main", "where a ppo_jax actor waits where the rule dispatches, and the reverse"
        ),
        "misses": Command(
            "studies.diagnose.misses:main", "the jobs a ppo_jax actor misses and the rule does not: slack at dispatch"
        ),
        "headroom": Command(
            "studies.cgrsp.headroom.study:main",
            "the headroom map: the rule vs its bounds, and the planner vs the rule (paired, resumable)",
        ),
        "rule-fix": Command(
            "studies.cgrsp.rule_fix:main", "the deferring rule before and after its two corrections (paired)"
        ),
        "defer-scale": Command(
            "studies.cgrsp.defer_scale:main", "the rule's defer_scale picked on selection seeds, paired on test"
        ),
        "planner-calibration": Command(
            "studies.cgrsp.planner.calibration:main", "the planner's screen horizon against full-day rollouts"
        ),
        "planner-cost": Command(
            "studies.cgrsp.planner.cost:main", "the rollout planner's cost per decision point against its base rule"
        ),
        "hgsp-tasks1": Command("studies.hgsp.tasks1:main", "why HGSP tasks1 misfits the study at its published load"),
    },
    what="diagnostic",
)

STUDIES = Group(
    "the research programme",
    {
        "experiments": Command("studies.cgrsp.programme.cli:main", "CGRSP experiment programme and docs/results.md"),
        "bench": BENCH,
        "diagnose": DIAGNOSE,
        "strong-rules": Command(
            "studies.cgrsp.strong_rules:main", "CGRSP: the strong-rule table (docs/strong_rules.md)"
        ),
        "persistence": Command("studies.cgrsp.persistence:main", "CGRSP: the stock-persistence sweep"),
        "generalise": Command("studies.cgrsp.generalise:main", "CGRSP: the generalisation table of a trained run"),
        "learner-table": Command(
            "studies.cgrsp.learner_table:main", "CGRSP: trained runs against the strongest rule, one row per run"
        ),
        "generalist": Command(
            "studies.cgrsp.learning.generalist:main",
            "CGRSP: the ppo_jax generalist per regime and on the month (resumable)",
        ),
        "parity": Command(
            "studies.cgrsp.learning.parity:main",
            "CGRSP: ppo_jax per regime from scratch against the best deferring rule (resumable)",
        ),
        "ablation": Command(
            "studies.cgrsp.learning.ablation:main", "CGRSP: ppo_jax, each design item on and off per regime (resumable)"
        ),
        "generalist-curves": Command(
            "studies.cgrsp.learning.generalist_curves:main",
            "CGRSP: the generalist's selection curves per regime against the rule (figure; trains nothing)",
        ),
        "ablation-items": Command(
            "studies.cgrsp.learning.items:main",
            "CGRSP: from ablation folders, the design and each of its items switched, per regime",
        ),
        "tune": Command("studies.cgrsp.learning.tune:main", "CGRSP: ppo_jax learning curves on the selection days"),
        "hgsp-report": Command(
            "studies.hgsp.cli:main", "HGSP: every policy x task set x cluster, orderings, CP-SAT gaps (docs/hgsp.md)"
        ),
        "llm-report": Command("studies.llm.cli:main", "LLM serving: FIFO vs WSRPT, both engines"),
        "mig-experiment": Command(
            "studies.mig.experiment:main", "MIG: Best-Fit vs CP-SAT vs the lower bound (docs/mig.md), resumable"
        ),
        "mig-histograms": Command(
            "studies.mig.histograms:main", "MIG: the generator's histograms against the configured distributions"
        ),
        "edge-experiment": Command(
            "studies.edge.experiment:main", "edge: MemBatch vs baseline ILP vs FCFS-LLF (docs/edge.md), resumable"
        ),
        "tune-rules": Command(
            "studies.tune_rules:main", "HGSP, LLM, MIG, edge: the strong rules' knobs on the selection seeds"
        ),
        "learners": Command(
            "studies.learners:main", "HGSP, LLM, MIG, edge: a learner's seeds against the rules (curves, verdicts)"
        ),
        "docs-graph": Command("studies.docs_graph:main", "the import graph of docs/architecture.md"),
    },
    note=("The installed library's commands (compare, trace, evaluate, generate-jobs) are `gpu-sched --help`."),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m studies``; returns the exit status."""
    return dispatch(STUDIES, sys.argv[1:] if argv is None else argv, PROG)


__all__ = ["BENCH", "DIAGNOSE", "PROG", "STUDIES", "main"]
