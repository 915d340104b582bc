"""``gpu-sched evaluate POLICY``: score any CGRSP policy the way this project judges its own.

    gpu-sched evaluate spt_rescue_defer_exp                  # the standard protocol (runs/evaluate/<label>/)
    gpu-sched evaluate runs/train/ppo_jax_hectic_seed0/<time> --out runs/eval/mine
    gpu-sched evaluate model.zip | policy.npz | my_module:MyPolicy
    gpu-sched evaluate cadr --quick                          # a ≤ 30 s look: hectic_fresh, 5 seeds, no month
    gpu-sched evaluate RUN_DIR --trace jobs.csv --seeds 5    # instead: the policy and every baseline on a job log
    gpu-sched evaluate RUN_DIR --persistence --seeds 20      # instead: fresh and D = 60..3600 s (persistence points)
    gpu-sched evaluate cadr --add-to docs/leaderboard         # also store the compact report for the leaderboard
    gpu-sched evaluate --leaderboard docs/leaderboard         # rebuild docs/leaderboard.md from the JSON there
    gpu-sched evaluate --scenario hgsp sagreedy               # another scenario's protocol (hgsp, llm, mig, edge)
    gpu-sched evaluate --scenario mig best_fit --add-to docs/leaderboard   # stored as docs/leaderboard/mig/<label>.json
    gpu-sched evaluate --scenario mig --leaderboard docs/leaderboard       # rebuild docs/leaderboard_mig.md

POLICY: a rule or heuristic name, an SB3 zip, an exported ppo_jax ``.npz``, a ``train.py`` run
folder (its best model, else its final one) or ``module:attr``
(:mod:`gpu_sched_agents.evaluate.policy`). The protocol, the statistics and report.json's schema:
:mod:`gpu_sched_agents.evaluate.protocol`, :mod:`~gpu_sched_agents.evaluate.judge`,
:mod:`~gpu_sched_agents.evaluate.report`. Writes ``report.md``, ``report.json`` and
``report.png`` into ``--out``; each finished scope's days go to ``--out/days/`` first, and a
rerun of the same POLICY reuses them when ``days/key.json`` holds the same key (the policy, its
model's or module's bytes, the protocol, the package version and the hash of the code that plays
the days: :func:`gpu_sched_agents.evaluate.protocol.days_key`); any other key is said and the
days are recomputed (an interrupted run loses no finished scope).
``--scenario`` (default ``cgrsp``: everything above) plays another scenario's row of
:mod:`gpu_sched_agents.evaluate.scenarios` through :mod:`gpu_sched_agents.evaluate.bench` (its regimes, its
registered rules, its bound hook; ``--executor`` serial, process or ray), with the same ``--out`` rules,
``days/`` store and report files (default ``runs/evaluate/<scenario>/<label>``).
The deferring rules' and bounds' days are stored across runs in the user's cache, keyed by the
simulator's code (:func:`gpu_sched_agents.evaluate.protocol.reference_store`): a second policy
plays only its own days. ``GPU_SCHED_REFERENCE_CACHE=0`` simulates them every time.

``--out`` is owned (:mod:`gpu_sched_env.core.outdir`): evaluate writes into a folder that does not
exist, an empty one, or one whose ``.gpu-sched.json`` names evaluate and the same POLICY; any
other folder is refused unless ``--force``. Either way it replaces or deletes only files its
manifest records as its own (a file of the same name it did not write is refused by name), and
it holds a lock on the folder while it writes (a second writer is refused). Several POLICY
arguments that would share a label get distinct ones (and folders), and are told so.
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
        help="output folder (default runs/evaluate/<label>; several POLICY: DIR/<label>): new, empty or evaluate's "
        "own for this POLICY (its .gpu-sched.json), else refused unless --force; locked while written",
    )
    ap.add_argument(
        "--force",
        action="store_true",
        help="write into an --out that evaluate did not make (the files there are kept: one of a name evaluate "
        "writes is still refused) or made for another POLICY (that POLICY's results are replaced)",
    )
    ap.add_argument(
        "--quick", action="store_true", help="a ≤ 30 s look: hectic_fresh only, 5 seeds, no month, 64 JAX days"
    )
    ap.add_argument("--seeds", type=int, default=None, help=f"test seeds per regime (default {STANDARD.seeds})")
    ap.add_argument(
        "--regimes",
        nargs="*",
        default=None,
        metavar="REGIME",
        help=f"regimes (default all: {', '.join(REGIMES)}); none: no regime, the month only",
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
    ap.add_argument("--page", type=Path, default=None, help="the leaderboard page (default DIR.md; DIR_<scenario>.md)")
    ap.add_argument(
        "--scenario",
        default="cgrsp",
        help="the scenario (cgrsp, hgsp, llm, mig, edge; default cgrsp): its regimes, rules and bound",
    )
    ap.add_argument(
        "--executor",
        default=None,
        help="with --scenario other than cgrsp: serial, process (default) or ray (the same numbers)",
    )
    return ap


def protocol_of(args: argparse.Namespace):
    """The protocol the options ask for: standard or quick, with any field overridden (then named custom)."""
    from gpu_sched_agents.evaluate.protocol import QUICK, REGIMES, STANDARD

    base = QUICK if args.quick else STANDARD
    regimes = None if args.regimes is None else tuple(args.regimes)
    allowed = f"allowed: {', '.join(REGIMES)}, or none (no regime: the month only)"
    if regimes == ():
        raise ConfigError(f"--regimes: no regime given; {allowed}")
    if regimes is not None and "none" in regimes:
        if len(regimes) > 1:
            raise ConfigError(f"--regimes {' '.join(regimes)}: none stands alone; {allowed}")
        regimes = ()
    over = {
        k: v
        for k, v in (
            ("seeds", args.seeds),
            ("regimes", regimes),
            ("month_reps", args.month_reps),
            ("jax_days", args.jax_days),
        )
        if v is not None and v != getattr(base, k)
    }
    return dataclasses.replace(base, **over, name="custom" if over else base.name).check()


def _folder(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


def planned(protocol: Any, args: argparse.Namespace) -> list[str]:
    """The files (relative to ``--out``) the look ``args`` asks for writes."""
    from gpu_sched_agents.evaluate.extras import PERSISTENCE_FILES, trace_files

    if args.persistence:
        return list(PERSISTENCE_FILES)
    if args.trace is not None:
        return trace_files(args.trace)
    return ["report.md", "report.png", "report.json", "days/key.json", *(f"days/{s}.csv" for s in protocol.scopes)]


def legacy_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of a folder evaluate wrote before it wrote manifests: its ``days/key.json`` names the POLICY."""
    from gpu_sched_agents.evaluate.policy import identity
    from gpu_sched_agents.evaluate.protocol import MONTH, REGIMES

    try:
        key = json.loads((out / "days" / "key.json").read_text())
        pol = key["policy"]
        owner = identity(str(pol["spec"]), str(pol["kind"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    names = ["report.md", "report.png", "report.json", "days/key.json", *(f"days/{s}.csv" for s in (*REGIMES, MONTH))]
    files = [n for n in names if (out / n).is_file()]
    return {"command": PROG, "owner": owner, "files": files, "source": "days/key.json, by an earlier evaluate"}


def distinct_labels(pols: list[Any]) -> list[str]:
    """Give POLICY arguments that would share a label (and a folder) distinct ones; returns what was changed.

    Two run folders or model files of one name get their parent folder's name appended, where
    that tells them apart, else ``-2``, ``-3`` …. The same POLICY twice is refused.
    """
    seen: dict[str, str] = {}
    for pol in pols:
        ident = json.dumps(pol.identity(), sort_keys=True)
        if ident in seen:
            raise ConfigError(f"POLICY {pol.spec!r} is given twice (as {seen[ident]!r}): give each POLICY once")
        seen[ident] = pol.spec
    said = []
    groups: dict[str, list[Any]] = {}
    for pol in pols:
        groups.setdefault(_folder(pol.label), []).append(pol)
    for group in groups.values():
        if len(group) < 2:
            continue
        parents = [Path(p.spec).resolve().parent.name if p.kind in ("run", "sb3", "npz") else "" for p in group]
        by_parent = all(parents) and len(set(parents)) == len(parents)
        for i, pol in enumerate(group):
            old = pol.label
            pol.label = f"{old} [{parents[i]}]" if by_parent else (old if i == 0 else f"{old}-{i + 1}")
            if pol.label != old:
                said.append(
                    f"POLICY {pol.spec!r}: labelled {pol.label!r} ({len(group)} POLICY share the label {old!r})"
                )
    taken: set[str] = set()
    for pol in pols:  # a label made above may still meet another POLICY's
        base, n = pol.label, 2
        while _folder(pol.label) in taken:
            pol.label, n = f"{base}-{n}", n + 1
        if pol.label != base:
            said.append(f"POLICY {pol.spec!r}: labelled {pol.label!r} ({base!r} is taken)")
        taken.add(_folder(pol.label))
    return said


def evaluate(args: argparse.Namespace, argv: Sequence[str]) -> list[Path]:
    """Resolve every POLICY, then play, judge and write each; returns the output folders.

    Every input is checked before anything is written: the options, every POLICY, the trace
    (read and validated), the labels and every output folder (:func:`gpu_sched_env.core.outdir.check`).
    """
    from gpu_sched_agents.evaluate.policy import resolve
    from gpu_sched_env.cgrsp.params import DAY_TYPES
    from gpu_sched_env.core.errors import check_choice, check_number
    from gpu_sched_env.core.fanout import default_workers
    from gpu_sched_env.core.outdir import check
    from gpu_sched_env.core.store import package_version

    protocol = protocol_of(args)
    workers = (
        default_workers() if args.workers is None else int(check_number("workers", args.workers, lo=1, integer=True))
    )
    if args.trace is not None and args.persistence:
        raise ConfigError(
            "--trace and --persistence: each is a look of its own (the policy on a job log; the "
            "persistence sweep on generated days); give one of them"
        )
    if args.trace is not None and Path(args.trace).is_dir():
        raise ConfigError(f"--trace {str(args.trace)!r} is a folder; expected a job log file (CSV or Parquet)")
    if args.trace is not None and not Path(args.trace).is_file():
        raise ConfigError(f"--trace {str(args.trace)!r}: no such file (a job log, CSV or Parquet)")
    if args.day is not None:
        check_choice("--day", args.day, DAY_TYPES)
    if len(args.policy) > 1 and (args.label or args.model):
        raise ConfigError("--label and --model name one POLICY; give one POLICY with them")
    pols = [resolve(p, model=args.model) for p in args.policy]
    if args.label:
        pols[0].label = args.label
    traces: dict[str, Any] = {}  # label -> the job log as read for that policy (--trace)
    if args.trace is not None:
        from gpu_sched_env.cgrsp.trace import Trace

        read: dict[Any, Any] = {}  # simulator parameters -> the log read under them (they decide `tight`)
        for pol in pols:
            if args.day:
                pol.config = pol.config.replace(day=args.day)
            p = pol.config.sim_params()
            try:  # read once and validated under the policy's parameters; every run then plays these jobs
                traces[pol.label] = read[p] = read[p] if p in read else Trace.load(args.trace, p)
            except ConfigError as e:
                raise ConfigError(f"--trace {str(args.trace)!r}: {e}") from None
    for line in distinct_labels(pols):
        print(f"{PROG}: {line}", flush=True)
    mode = "persistence" if args.persistence else "trace" if args.trace is not None else "protocol"
    plans = []
    for pol in pols:
        out = (args.out or Path("runs") / "evaluate") / _folder(pol.label)
        if len(pols) == 1 and args.out is not None:
            out = args.out
        info = {
            "label": pol.label,
            "look": mode,
            "protocol": dataclasses.asdict(protocol),
            "package": package_version(),
        }
        files = planned(protocol, args)
        plans.append(check(out, PROG, pol.identity(), files=files, force=args.force, info=info, legacy=legacy_manifest))
    outs = []
    for pol, plan in zip(pols, plans):
        one(pol, plan, protocol, workers, args, argv, traces.get(pol.label))
        outs.append(plan.path)
    return outs


def _stored_days(folder: Any, key: dict[str, Any]) -> None:
    """Keep ``days/`` only when its key is ``key``: else delete the days evaluate stored there, saying why."""
    from gpu_sched_agents.evaluate.protocol import key_changes

    parts = folder.path / "days"
    ours = [f for f in folder.files if f.startswith("days/") and f.endswith(".csv") and (folder.path / f).is_file()]
    stamp = parts / "key.json"
    if not ours:
        return
    old: Any = None
    if stamp.is_file() and folder.own("days/key.json"):
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = "unreadable"
    why = ["no key (days/key.json)"] if old is None else key_changes(old, key)
    if why:
        print(f"{PROG}: the days stored in {parts} were made by {', '.join(why)}: recomputing", flush=True)
        for f in ours:
            folder.remove_own(f)


def one(
    pol: Any,
    plan: Any,
    protocol: Any,
    workers: int,
    args: argparse.Namespace,
    argv: Sequence[str],
    trace: Any = None,
) -> None:
    """Play, judge and write one resolved policy into ``plan``'s folder (claimed: created, locked, manifest).

    ``trace``: with ``--trace``, the job log as :func:`evaluate` read it (a ``Trace``), played by every run.
    """
    from gpu_sched_agents.evaluate.judge import judge, judge_jax, score
    from gpu_sched_agents.evaluate.protocol import SEED0, days_key, run_scopes, units
    from gpu_sched_agents.evaluate.report import SCHEMA, write
    from gpu_sched_env.core.io import atomic_write_json
    from gpu_sched_env.core.outdir import claim

    with claim(plan) as folder:
        out = folder.path
        if args.trace is not None or args.persistence:
            from gpu_sched_agents.evaluate.extras import on_trace, persistence

            seeds = list(range(SEED0, SEED0 + protocol.seeds))
            if args.persistence:
                print(f"written {persistence(pol, seeds, out, workers)}")
            else:
                print(f"written {on_trace(pol, trace, seeds, out)}")
            return
        t0 = time.perf_counter()
        parts = out / "days"
        key = days_key(pol, protocol)
        _stored_days(folder, key)
        parts.mkdir(parents=True, exist_ok=True)
        atomic_write_json(parts / "key.json", key)
        print(f"{PROG}: {pol.label} ({pol.kind}), protocol {protocol.name}, {workers} worker(s) -> {out}", flush=True)
        # the in-JAX judging (XLA, GIL released) runs in a thread beside CGRSP-v0's days (worker processes)
        with ThreadPoolExecutor(1) as pool:
            in_jax = (
                pool.submit(judge_jax, pol, protocol) if pol.jax and protocol.jax_days and protocol.regimes else None
            )
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
    print((out / "report.md").read_text())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gpu-sched evaluate``; returns the exit status (2: bad input, nothing written)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = parser()
    args = ap.parse_args(argv)
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()  # a JAX policy's second look loads its compiled days
    try:
        from gpu_sched_agents.evaluate.scenarios import SCENARIO_NAMES
        from gpu_sched_env.core.errors import check_choice

        check_choice("--scenario", args.scenario, SCENARIO_NAMES)
        if args.scenario != "cgrsp":
            return scenario_main(args, argv)
        if args.executor is not None:
            raise ConfigError(
                f"--executor {args.executor!r}: CGRSP's protocol fans out on local processes (--workers); "
                "--executor is for --scenario hgsp, llm, mig or edge"
            )
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


CGRSP_ONLY = {  # option -> its default: what --scenario other than cgrsp refuses when given
    "trace": None,
    "persistence": False,
    "month_reps": None,
    "jax_days": None,
    "day": None,
}


def scenario_main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``--scenario`` hgsp, llm, mig or edge: the leaderboard page, or each POLICY on the scenario's protocol."""
    from gpu_sched_agents.evaluate import bench
    from gpu_sched_env.core.errors import check_choice, check_number
    from gpu_sched_env.core.fanout import EXECUTORS, default_workers

    for key, default in CGRSP_ONLY.items():
        if getattr(args, key) != default:
            flag = "--" + key.replace("_", "-")
            raise ConfigError(f"{flag}: CGRSP-only; not with --scenario {args.scenario}")
    if args.leaderboard is not None:
        if args.policy:
            raise ConfigError(f"POLICY {args.policy[0]!r} and --leaderboard: give one of them")
        from gpu_sched_agents.evaluate.leaderboard import build_scenario

        print(f"written {build_scenario(args.leaderboard, args.scenario, args.page)}")
        return 0
    if not args.policy:
        raise ConfigError(f"POLICY is missing: a {args.scenario} rule name, module:attr, an SB3 .zip or a run folder")
    executor = check_choice("--executor", args.executor or "process", EXECUTORS)
    workers = (
        default_workers() if args.workers is None else int(check_number("workers", args.workers, lo=1, integer=True))
    )
    regimes = None if args.regimes is None else tuple(args.regimes)
    proto = bench.protocol(args.scenario, args.quick, args.seeds, regimes)
    if len(args.policy) > 1 and (args.label or args.model):
        raise ConfigError("--label and --model name one POLICY; give one POLICY with them")
    pols = [bench.resolve(p, args.scenario, args.model) for p in args.policy]
    for pol in pols:
        if pol.kind in ("sb3", "run"):
            bench.check_model(pol, bench.benchmark(args.scenario), proto.regimes)
    if args.label:
        pols[0].label = args.label
    for line in distinct_labels(pols):
        print(f"{PROG}: {line}", flush=True)
    plans = []
    for pol in pols:
        out = args.out if len(pols) == 1 and args.out is not None else None
        out = out or (args.out or Path("runs") / "evaluate" / args.scenario) / _folder(pol.label)
        files = ["report.md", "report.png", "report.json", "days/key.json", *(f"days/{r}.csv" for r in proto.regimes)]
        info = {"label": pol.label, "look": "protocol", "protocol": dataclasses.asdict(proto)}
        plans.append(check(out, PROG, pol.identity(), files=files, force=args.force, info=info))
    fan = {"executor": executor, "workers": workers, "progress": False}
    for pol, plan in zip(pols, plans):
        scenario_one(pol, plan, proto, fan, args, argv)
    return 0


def scenario_one(pol: Any, plan: Any, proto: Any, fan: dict[str, Any], args: argparse.Namespace, argv: Any) -> None:
    """Play, judge and write one policy of another scenario into ``plan``'s folder (claimed)."""
    from gpu_sched_agents.evaluate import bench
    from gpu_sched_agents.evaluate.report import write
    from gpu_sched_env.core.io import atomic_write_json
    from gpu_sched_env.core.outdir import claim

    with claim(plan) as folder:
        out = folder.path
        t0 = time.perf_counter()
        key = bench.days_key(pol, proto)
        _stored_days(folder, key)
        (out / "days").mkdir(parents=True, exist_ok=True)
        atomic_write_json(out / "days" / "key.json", key)
        print(f"{PROG}: {pol.label} ({pol.kind}) on {proto.scenario}, protocol {proto.name} -> {out}", flush=True)
        rows = bench.run_regimes(pol, proto, fan, out / "days", log=lambda s: print(s, flush=True))
        command = " ".join([PROG, *map(shlex.quote, argv)])
        for path in write(bench.report(pol, proto, rows, command, time.perf_counter() - t0), out):
            print(f"written {path}")
    if args.add_to is not None:
        from gpu_sched_agents.evaluate.leaderboard import store

        print(f"written {store(json.loads((out / 'report.json').read_text()), args.add_to)}")
    print((out / "report.md").read_text())


def check(*args: Any, **kwargs: Any) -> Any:
    """:func:`gpu_sched_env.core.outdir.check` (imported when a command runs)."""
    from gpu_sched_env.core.outdir import check as outdir_check

    return outdir_check(*args, **kwargs)


__all__ = ["distinct_labels", "evaluate", "main", "parser", "planned", "protocol_of", "scenario_main"]
