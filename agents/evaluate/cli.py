"""``gpu-sched evaluate POLICY``: score any CGRSP policy the way this project judges its own.

    gpu-sched evaluate spt_rescue_defer_exp                  # the standard protocol (runs/evaluate/<label>/)
    gpu-sched evaluate runs/train/ppo_jax_hectic_seed0/<time> --out runs/eval/mine
    gpu-sched evaluate model.zip | policy.npz | my_module:MyPolicy
    gpu-sched evaluate cadr --quick                          # a ≤ 30 s look: hectic_fresh, 5 seeds, no month
    gpu-sched evaluate RUN_DIR --trace jobs.csv --seeds 5    # instead: the policy and every baseline on a job log
    gpu-sched evaluate RUN_DIR --persistence --seeds 20      # instead: fresh and D = 60..3600 s (persistence points)
    gpu-sched evaluate cadr --add-to docs/leaderboard         # also store the compact report for the leaderboard
    gpu-sched evaluate --leaderboard docs/leaderboard         # rebuild docs/leaderboard.md from the JSON there

POLICY: a rule or heuristic name, an SB3 zip, an exported ppo_jax ``.npz``, a ``train.py`` run
folder (its best model, else its final one) or ``module:attr``
(:mod:`gpu_sched_agents.evaluate.policy`). The protocol, the statistics and report.json's schema:
:mod:`gpu_sched_agents.evaluate.protocol`, :mod:`~gpu_sched_agents.evaluate.judge`,
:mod:`~gpu_sched_agents.evaluate.report`. Writes ``report.md``, ``report.json`` and
``report.png`` into ``--out``; each finished scope's days go to ``--out/days/`` first, and a
rerun with the same POLICY and protocol reuses them (an interrupted run loses no finished scope).
The deferring rules' and bounds' days are stored across runs in the user's cache, keyed by the
simulator's code (:func:`gpu_sched_agents.evaluate.protocol.reference_store`): a second policy
plays only its own days. ``GPU_SCHED_REFERENCE_CACHE=0`` simulates them every time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpu_sched_env.core.errors import ConfigError

PROG = "gpu-sched evaluate"


def parser() -> argparse.ArgumentParser:
    """The command line."""
    from gpu_sched_agents.evaluate.protocol import REGIMES, STANDARD

    ap = argparse.ArgumentParser(
        prog=PROG, description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "policy",
        nargs="*",
        help="rule name, SB3 .zip, ppo_jax .npz, run folder or module:attr; several: each in turn, the rules' and "
        "bounds' days shared",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default runs/evaluate/<label>; several POLICY: DIR/<label>)",
    )
    ap.add_argument(
        "--quick", action="store_true", help="a ≤ 30 s look: hectic_fresh only, 5 seeds, no month, 64 JAX days"
    )
    ap.add_argument("--seeds", type=int, default=None, help=f"test seeds per regime (default {STANDARD.seeds})")
    ap.add_argument(
        "--regimes", nargs="*", default=None, metavar="REGIME", help=f"regimes (default all: {', '.join(REGIMES)})"
    )
    ap.add_argument(
        "--month-reps", type=int, default=None, help=f"month replications, 0: no month (default {STANDARD.month_reps})"
    )
    ap.add_argument(
        "--jax-days",
        type=int,
        default=None,
        help=f"native JAX days per regime (JAX policies; default {STANDARD.jax_days})",
    )
    ap.add_argument("--model", default=None, help="the model file inside a run folder (default: best, else final)")
    ap.add_argument(
        "--trace", type=Path, default=None, metavar="FILE", help="instead: the policy and every baseline on a job log"
    )
    ap.add_argument(
        "--persistence", action="store_true", help="instead: fresh and D = 60..3600 s on hectic and surge (points)"
    )
    ap.add_argument("--workers", type=int, default=None, help="processes for the days (default: usable cores)")
    ap.add_argument("--day", default=None, help="with --trace: the day type of the simulator parameters")
    ap.add_argument("--label", default=None, help="the policy's name in the report (default: from POLICY)")
    ap.add_argument(
        "--leaderboard", type=Path, default=None, metavar="DIR", help="rebuild the leaderboard page from DIR/*.json"
    )
    ap.add_argument(
        "--add-to", type=Path, default=None, metavar="DIR", help="also store the compact report as DIR/<label>.json"
    )
    ap.add_argument("--page", type=Path, default=None, help="the leaderboard page (default DIR.md)")
    return ap


def protocol_of(args: argparse.Namespace):
    """The protocol the options ask for: standard or quick, with any field overridden (then named custom)."""
    from gpu_sched_agents.evaluate.protocol import QUICK, STANDARD

    base = QUICK if args.quick else STANDARD
    over = {
        k: v
        for k, v in (
            ("seeds", args.seeds),
            ("regimes", None if args.regimes is None else tuple(args.regimes)),
            ("month_reps", args.month_reps),
            ("jax_days", args.jax_days),
        )
        if v is not None and v != getattr(base, k)
    }
    return dataclasses.replace(base, **over, name="custom" if over else base.name).check()


def _folder(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


def evaluate(args: argparse.Namespace, argv: Sequence[str]) -> list[Path]:
    """Resolve every POLICY, then play, judge and write each; returns the output folders.

    Every input is checked before anything is written.
    """
    from gpu_sched_agents.evaluate.policy import resolve
    from gpu_sched_env.cgrsp.params import DAY_TYPES
    from gpu_sched_env.core.errors import check_choice, check_number
    from gpu_sched_env.core.fanout import default_workers

    protocol = protocol_of(args)
    workers = (
        default_workers() if args.workers is None else int(check_number("workers", args.workers, lo=1, integer=True))
    )
    if args.trace is not None and not Path(args.trace).is_file():
        raise ConfigError(f"--trace {str(args.trace)!r}: no such file (a job log, CSV or Parquet)")
    if args.day is not None:
        check_choice("--day", args.day, DAY_TYPES)
    if len(args.policy) > 1 and (args.label or args.model):
        raise ConfigError("--label and --model name one POLICY; give one POLICY with them")
    pols = [resolve(p, model=args.model) for p in args.policy]
    if args.label:
        pols[0].label = args.label
    outs = []
    for pol in pols:
        out = (args.out or Path("runs") / "evaluate") / _folder(pol.label)
        if len(pols) == 1 and args.out is not None:
            out = args.out
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {str(out)!r} is a file; pass a folder")
        outs.append(out)
    for pol, out in zip(pols, outs):
        one(pol, out, protocol, workers, args, argv)
    return outs


def one(pol: Any, out: Path, protocol: Any, workers: int, args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Play, judge and write one resolved policy into ``out``."""
    from gpu_sched_agents.evaluate.judge import judge, judge_jax, score
    from gpu_sched_agents.evaluate.protocol import SEED0, run_scopes, units
    from gpu_sched_agents.evaluate.report import SCHEMA, write
    from gpu_sched_env.core.io import atomic_write_json

    if args.trace is not None or args.persistence:
        from gpu_sched_agents.evaluate.extras import on_trace, persistence

        seeds = list(range(SEED0, SEED0 + protocol.seeds))
        out.mkdir(parents=True, exist_ok=True)
        if args.persistence:
            print(f"written {persistence(pol, seeds, out, workers)}")
        else:
            if args.day:
                pol.config = pol.config.replace(day=args.day)
            print(f"written {on_trace(pol, args.trace, seeds, out)}")
        return
    t0 = time.perf_counter()
    parts = out / "days"
    key = {"policy": pol.describe(), "fingerprint": pol.fingerprint(), "protocol": dataclasses.asdict(protocol)}
    stamp = parts / "key.json"
    if parts.is_dir() and (not stamp.is_file() or json.loads(stamp.read_text()) != json.loads(json.dumps(key))):
        for f in parts.glob("*.csv"):  # another policy or protocol: nothing there is ours
            f.unlink()
    parts.mkdir(parents=True, exist_ok=True)
    atomic_write_json(stamp, key)
    print(f"{PROG}: {pol.label} ({pol.kind}), protocol {protocol.name}, {workers} worker(s) -> {out}", flush=True)
    # the in-JAX judging (XLA, GIL released) runs in a thread beside CGRSP-v0's days (worker processes)
    with ThreadPoolExecutor(1) as pool:
        in_jax = pool.submit(judge_jax, pol, protocol) if pol.jax and protocol.jax_days and protocol.regimes else None
        rows = run_scopes(pol, protocol, workers, parts, log=lambda s: print(s, flush=True))
        scopes = judge(units(rows))
        jax = None if in_jax is None else in_jax.result()
    report = {
        "schema": SCHEMA,
        "policy": pol.describe() | {"label": pol.label},
        "protocol": protocol.describe(),
        "scopes": scopes,
        "jax": jax,
        "score": score(scopes),
        "command": " ".join([PROG, *map(shlex.quote, argv)]),
        "wall_s": time.perf_counter() - t0,
    }
    for path in write(report, out):
        print(f"written {path}")
    if args.add_to is not None:
        from gpu_sched_agents.evaluate.leaderboard import store

        print(f"written {store(json.loads((out / 'report.json').read_text()), args.add_to)}")
    if args.trace is None and not args.persistence:
        print((out / "report.md").read_text())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gpu-sched evaluate``; returns the exit status (2: bad input, nothing written)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = parser()
    args = ap.parse_args(argv)
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()  # a JAX policy's second look loads its compiled days
    try:
        if args.leaderboard is not None:
            if args.policy:
                raise ConfigError(f"POLICY {args.policy[0]!r} and --leaderboard: give one of them")
            from gpu_sched_agents.evaluate.leaderboard import build

            page = build(args.leaderboard, args.page)
            print(f"written {page}")
            return 0
        if not args.policy:
            raise ConfigError(
                "POLICY is missing: a rule name, an SB3 .zip, a ppo_jax .npz, a run folder or module:attr"
            )
        evaluate(args, argv)
        return 0
    except ConfigError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


__all__ = ["main", "parser", "protocol_of"]
