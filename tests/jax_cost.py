"""Where the test suite's JAX time goes: a pytest plugin, opt-in with ``-p tests.jax_cost``.

``.venv/bin/python -m pytest -m "not slow and not e2e" -q -p tests.jax_cost`` ends with a table, per test
file, of the seconds JAX spent tracing programs to jaxprs, lowering them to MLIR, compiling them
(XLA) and loading them from the persistent compile cache, beside the file's whole test time;
the rest of a file's time is running the programs and everything that is not JAX. It reads
JAX's own monitoring events (``jax.monitoring``), so it changes nothing it measures, and works
under pytest-xdist (each worker sends its totals to the controller). docs/tests.md says how the
suite is kept fast; docs/journal/project.md dates what this table showed.
"""

from __future__ import annotations

import collections

EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
    "/jax/compilation_cache/cache_retrieval_time_sec": "cache load",
}
COLUMNS = ("test", *EVENTS.values())
_totals: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
_current = ["(collection)"]


def _listener(event: str, duration: float, **_: object) -> None:
    if event in EVENTS:
        _totals[_current[0]][EVENTS[event]] += duration


def pytest_configure(config) -> None:
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_listener)


def pytest_runtest_logstart(nodeid, location) -> None:
    _current[0] = nodeid.split("::")[0]  # the file whose test runs now (events come from this process)


def pytest_runtest_logreport(report) -> None:
    if report.when in ("setup", "call", "teardown") and not hasattr(report, "node"):  # on the process that ran it
        _totals[report.nodeid.split("::")[0]]["test"] += report.duration


def pytest_sessionfinish(session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the totals to the controller
        workeroutput["jax_cost"] = {f: dict(c) for f, c in _totals.items()}


def pytest_testnodedown(node, error) -> None:
    for f, c in getattr(node, "workeroutput", {}).get("jax_cost", {}).items():
        _totals[f].update(c)


def pytest_terminal_summary(terminalreporter) -> None:
    if getattr(terminalreporter.config, "workeroutput", None) is not None:
        return
    rows = sorted(_totals.items(), key=lambda kv: -kv[1]["test"])
    tr = terminalreporter
    tr.section("JAX time per test file [s] (tests.jax_cost)")
    tr.write_line(f"{'file':60s} " + " ".join(f"{c:>10s}" for c in COLUMNS))
    total = collections.Counter()
    for f, c in rows:
        total.update(c)
        if c["test"] >= 1.0 or f == "(collection)":
            tr.write_line(f"{f[:60]:60s} " + " ".join(f"{c[k]:10.1f}" for k in COLUMNS))
    tr.write_line(f"{'all files':60s} " + " ".join(f"{total[k]:10.1f}" for k in COLUMNS))
