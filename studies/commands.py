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


def _parts(help: str, parts: dict[str, Command | Group], default: str = "", flag: str = "--part") -> Group:
    """One command answered in several parts (each a module of its own), chosen by ``flag``."""
    return Group(help, parts, what="part" if flag == "--part" else flag.lstrip("-"), flag=flag, default=default)


BENCH = Group(
    "benchmarks: the CGRSP simulator, its env, the JAX env and ppo_jax, the other scenarios",
    {
        "sim": _parts(
            "CGRSP simulator: jobs/s vs a bare heapq loop; reading a job log",
            {
                "sim": Command(
                    "studies.bench.sim:main",
                    "jobs/s vs a bare heapq loop, the 30-seed grid, scaling to 100 000 jobs",
                ),
                "trace-load": Command(
                    "studies.bench.trace_load:main",
                    "a 1 000 000-row job log: Trace.load's time and peak memory vs the pandas reader it replaced",
                ),
            },
            default="sim",
        ),
        "env": _parts(
            "CGRSP-v0: env steps/s and the SB3 learner's frames/s",
            {
                "env": Command("studies.bench.env:main", "env steps/s vs CartPole-v1; rgb_array frame time (--render)"),
                "train": Command(
                    "studies.bench.train:main", "MaskablePPO training frames/s on CGRSP-v0 vs InvalidActionEnvDiscrete"
                ),
            },
            default="env",
        ),
        "jax": _parts(
            "the JAX env and ppo_jax: steps/s, frames/s, many days, illegal actions, an older commit",
            {
                "jax": Command(
                    "studies.bench.jax:main",
                    "JAX env steps/s vs CGRSP-v0's; ppo_jax training frames/s vs MaskablePPO's (--json)",
                ),
                "days": Command(
                    "studies.bench.jax_days:main",
                    "policies on many native JAX days: batches of 100 days (one compiled shape) vs one batch of all",
                ),
                "illegal": Command(
                    "gpu_sched_env.cgrsp.jax.illegal:main",
                    "native days with a share of masked-out actions, jobs lost (0 expected)",
                ),
                "ab": Command(
                    "studies.bench.jax_ab:main", "an older commit's speed against the checkout's, one process"
                ),
                "seeds": Command(
                    "studies.bench.ppo_jax_seeds:main",
                    "ppo_jax frames/s: several seeds side by side (vmap) vs the same seeds in turn",
                ),
            },
            default="jax",
        ),
        "scenarios": _parts(
            "HGSP, MIG and the edge cluster: their simulators' and solvers' speed",
            {
                "hgsp": Command("studies.bench.hgsp:main", "HGSP FIFO / Greedy tasks/s and SAGreedy's wall time"),
                "mig": Command("studies.bench.mig:main", "MIG generator throughput and CP-SAT vs Best-Fit solve time"),
                "edge": Command("studies.bench.edge:main", "edge schedulers' runtime on 100 tasks vs FCFS-LLF"),
            },
        ),
    },
    what="benchmark",
)

# The CGRSP questions answered in parts: each part a diagnostic module of its own.
STRONG_RULES = _parts(
    "CGRSP: the strongest rules and how the deferring rule was made",
    {
        "table": Command("studies.cgrsp.strong_rules:main", "the strong-rule table (docs/strong_rules.md)"),
        "rule-fix": Command(
            "studies.cgrsp.rule_fix:main", "the deferring rule before and after its two corrections (paired)"
        ),
        "defer-scale": Command(
            "studies.cgrsp.defer_scale:main", "the rule's defer_scale picked on selection seeds, paired on test"
        ),
        "rh-reservation": Command("studies.cgrsp.rh_reservation:main", "where RH's reservation puts loose jobs"),
    },
    default="table",
)
HEADROOM = _parts(
    "CGRSP: the room above the strongest rule (bounds, the rollout planner)",
    {
        "map": Command(
            "studies.cgrsp.headroom.study:main",
            "the headroom map: the rule vs its bounds, and the planner vs the rule (paired, resumable)",
        ),
        "planner-calibration": Command(
            "studies.cgrsp.planner.calibration:main", "the planner's screen horizon against full-day rollouts"
        ),
        "planner-cost": Command(
            "studies.cgrsp.planner.cost:main", "the rollout planner's cost per decision point against its base rule"
        ),
    },
    default="map",
)
VERSUS_RULE = _parts(
    "CGRSP: where and why a learned policy differs from the strongest rule",
    {
        "which": _parts(
            "does a learner lose to the strongest rule on when or on which job?",
            {
                "numpy": Command(
                    "studies.cgrsp.versus_rule.versus_rule:main", "an SB3 run against the rule in CGRSP-v0"
                ),
                "jax": Command(
                    "studies.cgrsp.versus_rule.versus_rule_jax:main",
                    "a ppo_jax actor against the rule in JAX: when, which job, which slot",
                ),
            },
            default="numpy",
            flag="--engine",
        ),
        "timing": Command(
            "studies.cgrsp.versus_rule.timing_jax:main",
            "where a ppo_jax actor waits where the rule dispatches, and the reverse",
        ),
        "misses": Command(
            "studies.cgrsp.versus_rule.misses:main",
            "the jobs a ppo_jax actor misses and the rule does not: slack at dispatch",
        ),
        "policy": Command(
            "studies.cgrsp.versus_rule.policy:main", "why a trained CGRSP policy waits: argmax vs factored vs sampled"
        ),
        "design-cost": Command(
            "studies.cgrsp.versus_rule.design_cost:main", "what an env's action design costs a rule against simulate()"
        ),
    },
    default="which",
)
REWARD = _parts(
    "CGRSP: does the reward teach what the objective scores?",
    {
        "step": Command(
            "studies.cgrsp.reward.reward:main", "step reward of dispatch vs idle by stock (and a Monte-Carlo value)"
        ),
        "advantages": Command(
            "studies.cgrsp.reward.advantages:main", "PPO's advantages at dispatch-or-idle, by stock level"
        ),
        "scale": Command(
            "studies.cgrsp.reward.reward_scale:main", "the JAX step reward's shaping term vs the rest, by time of day"
        ),
        "regimes": Command(
            "studies.cgrsp.reward.regime_scale:main", "the judged regimes' reward and return scales under the rule"
        ),
        "alignment": Command(
            "studies.cgrsp.reward.reward_alignment:main", "do reward presets rank heuristics as the objective?"
        ),
    },
    default="step",
)

STUDIES = Group(
    "the research programme",
    {
        "experiments": Command("studies.cgrsp.programme.cli:main", "CGRSP experiment programme and docs/results.md"),
        "strong-rules": STRONG_RULES,
        "persistence": Command("studies.cgrsp.persistence:main", "CGRSP: the stock-persistence sweep"),
        "headroom": HEADROOM,
        "generalise": Command("studies.cgrsp.generalise:main", "CGRSP: the generalisation table of a trained run"),
        "learner-table": Command(
            "studies.cgrsp.learner_table:main", "CGRSP: trained runs against the strongest rule, one row per run"
        ),
        "parity": Command(
            "studies.cgrsp.learning.parity:main",
            "CGRSP: ppo_jax per regime from scratch against the best deferring rule (resumable)",
        ),
        "generalist": _parts(
            "CGRSP: the ppo_jax generalist per regime and on the month",
            {
                "train": Command(
                    "studies.cgrsp.learning.generalist:main", "train and judge it per regime and on a month (resumable)"
                ),
                "curves": Command(
                    "studies.cgrsp.learning.generalist_curves:main",
                    "its selection curves per regime against the rule (figure; trains nothing)",
                ),
            },
            default="train",
        ),
        "ablation": _parts(
            "CGRSP: ppo_jax, each design item on and off per regime",
            {
                "train": Command("studies.cgrsp.learning.ablation:main", "train and judge every row (resumable)"),
                "items": Command(
                    "studies.cgrsp.learning.items:main",
                    "from ablation folders, the design and each of its items switched, per regime",
                ),
            },
            default="train",
        ),
        "tune": Command("studies.cgrsp.learning.tune:main", "CGRSP: ppo_jax learning curves on the selection days"),
        "versus-rule": VERSUS_RULE,
        "reward": REWARD,
        "hgsp-report": _parts(
            "HGSP: every policy x task set x cluster, orderings, CP-SAT gaps (docs/hgsp.md)",
            {
                "report": Command("studies.hgsp.cli:main", "the report's tables (docs/hgsp.md)"),
                "tasks1": Command(
                    "studies.hgsp.tasks1:main", "why HGSP tasks1 misfits the study at its published load"
                ),
            },
            default="report",
        ),
        "llm-report": Command("studies.llm.cli:main", "LLM serving: FIFO vs WSRPT, both engines"),
        "mig-experiment": _parts(
            "MIG: Best-Fit vs CP-SAT vs the lower bound (docs/mig.md), and the generator's histograms",
            {
                "experiment": Command("studies.mig.experiment:main", "the experiment (resumable)"),
                "histograms": Command(
                    "studies.mig.histograms:main", "the generator's histograms against the configured distributions"
                ),
            },
            default="experiment",
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
        "bench": BENCH,
        "results": Command("studies.results:main", "the result pages' tables from the studies' stored rows"),
        "docs-graph": Command("studies.docs_graph:main", "the import graph of docs/architecture.md"),
    },
    note=("The installed library's commands (compare, trace, evaluate, generate-jobs) are `gpu-sched --help`."),
)


def count(group: Group = STUDIES) -> int:
    """How many commands the table has: a plain group's entries counted through, a command with parts as one."""
    return sum(count(e) if isinstance(e, Group) and not e.flag else 1 for e in group.commands.values())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m studies``; returns the exit status."""
    return dispatch(STUDIES, sys.argv[1:] if argv is None else argv, PROG)


__all__ = ["BENCH", "HEADROOM", "PROG", "REWARD", "STRONG_RULES", "STUDIES", "VERSUS_RULE", "count", "main"]
