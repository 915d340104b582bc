"""The documented commands run at their smallest budget, batch ``rules``: in one shared process.

The simulators' commands (CGRSP, HGSP, MIG, edge, LLM), the rules' studies and the benchmarks.

Each entry of :data:`tests.documented_runs.RUNS` in this batch runs in turn in one fresh Python
process (the module fixture); each test asserts one command's exit status and outputs. The other
batch is the other file's, so xdist's two workers share the runs (``--dist loadfile``).
"""

from __future__ import annotations

import pytest

from tests import documented_runs as dr

pytestmark = pytest.mark.e2e
BATCHES = ("rules",)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return dr.run_batches(BATCHES, tmp_path_factory.mktemp("documented_runs"))


@pytest.mark.parametrize("spelling", dr.spellings_of(BATCHES))
def test_documented_command_runs(spelling, results):
    dr.check(spelling, results)


def test_the_runs_leave_git_status_of_docs_and_runs_as_it_was(results):
    """Each command's own writes are checked by its test (the child's audit hook); this is git's view."""
    assert sorted(set(results.after) - set(results.before)) == []
