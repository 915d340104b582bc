#!/usr/bin/env bash
# Create .venv and install the project with everything it needs, on a fresh machine.
# torch is installed first, pinned to the local CPU build, so that the `torch` requirement of the
# train extra and of stable-baselines3 is already satisfied and no multi-GB CUDA build is fetched.
# Every other dependency, with the extras train (SB3, Hydra, TensorBoard), dev (tests, lint),
# ray (parallel experiments), jax (the JAX fast path, algo=ppo_jax, the gymnax and Jumanji
# adapters), sweep (Optuna sweeper, Ray launcher) and docs (the MkDocs site), i.e. the extra
# `all`, comes from requirements.lock at the exact versions pinned there (refresh it with
# `bash scripts/lock.sh`), then the project itself, editable, without dependencies.
# (The package alone, for the simulators and envs only: `pip install .`, no torch; docs/performance.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q "pip==26.3"
# pip byte-compiles what it installs on one core; --no-compile, then compileall on every core: the
# same .pyc files in less time (the venv's imports must not compile them again: PYTHONDONTWRITEBYTECODE
# may be set, and then every process would). A package file that does not compile (another Python's
# syntax, test data) is no error, as for pip's own compile.
.venv/bin/python -m pip install -q --no-compile "torch==2.13.0"
.venv/bin/python -m pip install -q --no-compile -r requirements.lock
.venv/bin/python -m pip install -q --no-deps -e .
.venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null || true
.venv/bin/python -m pip check  # the lock is complete and consistent with torch and the project
.venv/bin/python -c "import torch, gpu_sched_env; print('setup ok: torch', torch.__version__, '| gpu_sched_env', gpu_sched_env.__version__)"
