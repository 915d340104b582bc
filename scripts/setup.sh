#!/usr/bin/env bash
# Create .venv and install the project with everything it needs, on a fresh machine.
# torch is installed first, pinned to the local CPU build, so that stable-baselines3's
# unpinned `torch` requirement is already satisfied and no multi-GB CUDA build is fetched.
# Extras: dev (tests, lint), ray (parallel experiments), jax (the JAX fast path and algo=ppo_jax), sweep (Optuna sweeper, Ray launcher),
# docs (the MkDocs site).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,ray,sweep,docs,jax]"
.venv/bin/python -c "import torch, gpu_sched_env; print('setup ok: torch', torch.__version__, '| gpu_sched_env', gpu_sched_env.__version__)"
