"""Fixtures of the MIG tests: the Java job generator's reference files (interop tests).

They live in the shared data folder beside the repository, ``../shared/data/job-generator``
(``test_config.json``, ``test_jobs.json``); ``GPU_SCHED_ENV_SHARED`` names another shared
folder. Without them the interop tests are skipped, and the skip reason says what is missing.
"""

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("GPU_SCHED_ENV_SHARED", Path(__file__).resolve().parents[2] / "../shared")).resolve()
PEER_DIR = SHARED / "data" / "job-generator"
PEER_FILES = ("test_config.json", "test_jobs.json")


@pytest.fixture
def peer_dir() -> Path:
    missing = [f for f in PEER_FILES if not (PEER_DIR / f).is_file()]
    if missing:
        pytest.skip(
            f"MIG interop: needs the Java job generator's reference files {', '.join(PEER_FILES)} in "
            f"{PEER_DIR} (../shared/data/job-generator beside the repository, or set GPU_SCHED_ENV_SHARED "
            f"to the shared folder); missing: {', '.join(missing)}"
        )
    return PEER_DIR
