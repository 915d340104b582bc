"""Process fan-out: a safe start method, and workers that die with their parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpu_sched_env.core.fanout import map_cells, process_pool, start_method

ROOT = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat.rsplit(b")", 1)[1].split()[0] != b"Z"


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_bytes().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def test_pool_never_forks():
    assert start_method() in ("forkserver", "spawn")
    with process_pool(1) as pool:
        assert pool._mp_context.get_start_method() == start_method()


def test_process_results_come_back_in_cell_order():
    cells = [{"number": i / 7, "ndigits": 3} for i in range(6)]
    expected = [round(i / 7, 3) for i in range(6)]
    assert map_cells(round, cells, executor="process", workers=2, progress=False) == expected
    assert map_cells(round, cells, executor="serial", progress=False) == expected


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to list a process's children")
def test_workers_exit_within_seconds_when_the_parent_is_killed(tmp_path):
    (tmp_path / "slowcell.py").write_text(
        textwrap.dedent("""
        import os, time
        from pathlib import Path

        def slow(out, i):
            Path(out, f"{os.getpid()}.pid").write_text(str(i))
            time.sleep(120)  # [s] far longer than the test waits
            return i
    """)
    )
    driver = textwrap.dedent(f"""
        import slowcell
        from gpu_sched_env.core.fanout import map_cells
        map_cells(slowcell.slow, [{{"out": {str(tmp_path)!r}, "i": i}} for i in range(2)],
                  executor="process", workers=2, progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    parent = subprocess.Popen([sys.executable, "-c", driver], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("*.pid"))) < 2:
            assert parent.poll() is None, "driver exited early"
            assert time.monotonic() < deadline, "workers did not start within 60 s"
            time.sleep(0.1)
        workers = {int(p.stem) for p in tmp_path.glob("*.pid")}
        tree = _descendants(parent.pid)  # workers and the forkserver
        assert workers <= tree
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 5.0  # [s] the watchdog polls every 0.5 s
    while any(_alive(p) for p in tree) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in tree if _alive(p)]
    for p in left:  # do not leak them into the rest of the test run
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes still alive 5 s after their parent was killed: {left}"
