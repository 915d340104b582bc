"""The benchmarks, one module per benchmark, each with ``main(argv)``.

``python -m studies bench NAME [ARGS...]`` runs one (the table is :data:`studies.commands.BENCH`);
``NAME --help`` lists its options. Speed is measured here, never in timed tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout, where ``studies`` imports from


def child_json(module: str, *args: str) -> dict:
    """Run ``python -m MODULE ARGS`` in a fresh process from the checkout root; its last stdout line, as JSON.

    For figures a warm process would distort (peak memory, a first import): each measurement in a
    process of its own.
    """
    out = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
