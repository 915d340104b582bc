"""The test suite's xdist workers leave with ``os._exit`` (tests/conftest.py): no result may be lost by it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.e2e
def test_workers_leaving_early_lose_no_result(tmp_path):
    """Two workers, tests that pass, fail and error, in files on both: every outcome reaches the
    controller, the run fails as it should, and no worker is reported as crashed."""
    for w in range(2):
        (tmp_path / f"test_w{w}.py").write_text(
            "import pytest\n"
            "def test_passes():\n    assert True\n"
            f"def test_fails():\n    assert 1 == {w + 2}, 'fails in file {w}'\n"
            "@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture error')\n"
            "def test_errors(broken):\n    pass\n"
        )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2", "--dist", "loadfile", "-q",
         "-p", "no:cacheprovider", "-o", "addopts=", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 failed, 2 passed, 2 errors" in out, out
    assert "fails in file 0" in out and "fails in file 1" in out, out
    assert "crashed" not in out and "Not properly terminated" not in out, out
