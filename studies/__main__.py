"""``python -m studies COMMAND [ARGS...]`` from the repository root (see :mod:`studies.commands`)."""

from studies.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
