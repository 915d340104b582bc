"""Shared pytest configuration."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
