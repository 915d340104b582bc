"""What the ``scripts/*.py`` shims of the research programme share.

A script run by path (``python scripts/NAME.py``) has ``scripts/`` first on ``sys.path``, not the
checkout root, and ``studies/`` is not installed with the package; so these shims, kept for the
documented old commands, append the checkout root once here (the one path edit left in the
project). ``python -m studies COMMAND`` from the root is the same without it.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_studies(*command: str) -> int:
    """``python -m studies COMMAND... ARGS...`` with this script's arguments; returns the exit status."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from studies.commands import main

    return main([*command, *sys.argv[1:]])
