"""Commands run as processes of their own, forked from one fresh interpreter that imported their modules once.

A command's process (``python train.py ...``) spends most of its life importing (torch, SB3, Hydra:
~5 s of CPU on the project's 2-core machine) before it refuses a setting in a fraction of a second.
:func:`run_forked` starts one fresh interpreter, imports the given modules there once, then forks
one child per command: each child is a process of its own (its own pid, exit status, stdout and
stderr, working folder, environment and ``sys.argv``), runs the script or module as ``__main__``
as ``python SCRIPT ARGS`` / ``python -m MODULE ARGS`` would, and leaves with the status the
command exits with (an uncaught exception: its traceback on stderr and status 1, as Python's).
The children share the parent's imported modules and nothing else: the parent only imports.
:class:`ForkServer` does the same for commands that must run side by side (a writer holding a
folder's lock while others are refused): it forks a child per request and returns at once, as
``subprocess.Popen`` does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_CHILD = r"""
import importlib, json, os, runpy, sys, traceback


def child(job):
    # in the forked child: become the command's process, run it as __main__, leave with its status
    code = 1
    try:
        os.chdir(job["cwd"])
        os.environ.update(job["env"])
        for entry in reversed([p for p in job["env"].get("PYTHONPATH", "").split(os.pathsep) if p]):
            sys.path.insert(1, entry)  # as Python's start does: after the script's folder, before the rest
        for fd, path in ((1, job["stdout"]), (2, job["stderr"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.argv = list(job["argv"])
        try:
            if job["module"]:
                sys.path[0] = os.getcwd()
                sys.modules.pop(job["module"], None)  # as `python -m`: __main__ is not the imported module
                runpy.run_module(job["module"], run_name="__main__", alter_sys=True)
            else:
                sys.path[0] = os.path.dirname(os.path.abspath(job["argv"][0]))
                runpy.run_path(job["argv"][0], run_name="__main__")
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def fork(job):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(job)
    return pid
"""

# one batch: every job in turn, then the exit statuses as one JSON line
_DRIVER = (
    _CHILD
    + r"""
spec = json.loads(sys.stdin.read())
for m in spec["preload"]:
    importlib.import_module(m)
results = {}
for name, job in spec["jobs"].items():
    _, status = os.waitpid(fork(job), 0)
    results[name] = os.waitstatus_to_exitcode(status)
print(json.dumps(results))
"""
)

# a server: one JSON request a line (start a job, poll or wait for a child), one JSON answer a line
_SERVER = (
    _CHILD
    + r"""
for m in json.loads(sys.argv[1]):
    importlib.import_module(m)
print("{}", flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "start":
        out = {"pid": fork(req["job"])}
    else:
        pid, status = os.waitpid(req["pid"], os.WNOHANG if req["op"] == "poll" else 0)
        out = {"code": os.waitstatus_to_exitcode(status) if pid else None}
    print(json.dumps(out), flush=True)
"""
)


@dataclass(frozen=True)
class Finished:
    """A forked command's exit status and output, as ``subprocess.run(..., capture_output=True, text=True)`` gives."""

    returncode: int
    stdout: str
    stderr: str


def run_forked(jobs: dict[str, dict], preload: list[str], folder: Path, timeout: float = 300) -> dict[str, Finished]:
    """Run each job (``argv``: a script and its arguments, or ``module`` with ``argv``; ``cwd``; ``env``) in a child.

    The children are forked one after the other from one fresh interpreter that imported
    ``preload`` first; ``folder`` receives their stdout and stderr files.
    """
    spec = {"preload": preload, "jobs": {}}
    for i, (name, job) in enumerate(jobs.items()):
        out, err = folder / f"{i}.out", folder / f"{i}.err"
        spec["jobs"][name] = _job(job["argv"], job["cwd"], job.get("env"), job.get("module"), out, err)
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER], input=json.dumps(spec), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    codes = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        name: Finished(codes[name], Path(job["stdout"]).read_text(), Path(job["stderr"]).read_text())
        for name, job in spec["jobs"].items()
    }


def _job(argv, cwd, env, module, out: Path, err: Path) -> dict:
    return {
        "argv": [str(a) for a in argv],
        "module": module,
        "cwd": str(cwd),
        "env": dict(env or {}),
        "stdout": str(out),
        "stderr": str(err),
    }


class ForkServer:
    """A fresh interpreter that imported ``preload`` once and forks a child per command on request.

    :meth:`start` returns a :class:`Child` at once (as ``subprocess.Popen``), so commands can run
    side by side: each is a process of its own (its pid, exit status, output). Close it with
    :meth:`close` (a module fixture's teardown).
    """

    def __init__(self, preload: list[str], folder: Path) -> None:
        self.folder, self.n = folder, 0
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, json.dumps(preload)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout.readline().strip() == "{}", "the fork server did not start"

    def ask(self, req: dict) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the fork server died"
        return json.loads(line)

    def start(self, argv, cwd, env=None, module: str | None = None) -> Child:
        """``python SCRIPT ARGS`` (``argv``), or ``python -m MODULE ARGS`` (``module``; ``argv[0]`` ignored)."""
        self.n += 1
        out, err = self.folder / f"{self.n}.out", self.folder / f"{self.n}.err"
        pid = self.ask({"op": "start", "job": _job(argv, cwd, env, module, out, err)})["pid"]
        return Child(self, pid, out, err)

    def run(self, argv, cwd, env=None, module: str | None = None, timeout: float = 120) -> Finished:
        """:meth:`start`, then wait for the command to finish (as ``subprocess.run``)."""
        child = self.start(argv, cwd, env, module)
        stdout, stderr = child.communicate(timeout)
        return Finished(child.returncode, stdout, stderr)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Child:
    """A forked command (``subprocess.Popen``'s ``pid``, ``poll``, ``communicate`` and ``returncode``)."""

    def __init__(self, server: ForkServer, pid: int, out: Path, err: Path) -> None:
        self.server, self.pid, self.out, self.err = server, pid, out, err
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.ask({"op": "poll", "pid": self.pid})["code"]
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Wait for the command to finish; its stdout and stderr (``timeout``: polled for, then an error)."""
        import time

        t0 = time.monotonic()
        while self.poll() is None:
            if timeout is not None and time.monotonic() - t0 > timeout:
                raise subprocess.TimeoutExpired(self.pid, timeout)
            time.sleep(0.05)
        return self.out.read_text(), self.err.read_text()
