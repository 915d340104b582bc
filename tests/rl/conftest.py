"""The ``trainer`` fixture of the ``train.py`` runs (tests/rl/train_runs.py)."""

import pytest

from tests.rl.train_runs import start_trainer


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    """One per test module: its runs fork from one server and share a user cache new to the module."""
    t = start_trainer(tmp_path_factory.mktemp("forked"), tmp_path_factory.mktemp("user_cache"))
    yield t
    t.server.close()
