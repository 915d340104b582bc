#!/usr/bin/env bash
# Extend the headroom map on the lent 16-core machine in under 8 minutes of wall time.
# Layer (a) first (cheap; completes the grid if the store that travelled lacks rows of this
# code version), then layer (b) until its deadline; finished days are kept, in-flight ones
# dropped, and a rerun (here or there) completes the rest. The store comes back under $OUT.
#   carry: runs/headroom        then here: cp <files_at>/headroom/*.parquet runs/headroom/
#   render: python -m studies headroom --render docs/figures/headroom
set -euo pipefail
cd "$(dirname "$0")/../../.."  # the checkout root
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
STORE=${STORE:-runs/headroom}
"$PY" -m studies headroom --layer a --seeds 20 --workers 16 --max-seconds 90 --store "$STORE"
"$PY" -m studies headroom --layer b --seeds "${SEEDS:-12}" --workers 16 --max-seconds "${B_SECONDS:-330}" --store "$STORE"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/headroom" && cp "$STORE"/chunk-*.parquet "$OUT/headroom/"
fi
