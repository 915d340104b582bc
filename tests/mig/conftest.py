from pathlib import Path

import pytest

PEER_DIR = (Path(__file__).resolve().parents[2] / "../shared/data/job-generator").resolve()


@pytest.fixture
def peer_dir() -> Path:
    if not (PEER_DIR / "test_jobs.json").is_file() or not (PEER_DIR / "test_config.json").is_file():
        pytest.skip(f"reference data not found at {PEER_DIR} (clone shared/ beside the repo)")
    return PEER_DIR
