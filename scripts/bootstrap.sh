# Sourced by build_book.sh and run_tests.sh: make .venv with toxlib and the exact releases of requirements/.
# CPU machines get PyTorch's CPU wheel first (a plain "torch" requirement would pull several GB of CUDA packages).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"
EXTRAS="${TOXLIB_EXTRAS:-}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[bootstrap] creating $VENV with $($PY --version)"
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

# The lock: exact releases with hashes (requirements/, made by scripts/lock.sh). The book's own lock when only the
# book extra is asked for; else the test command's, which holds every extra.
case ",${EXTRAS}," in
  ,book,|,,) LOCK="$ROOT/requirements/lock-book.txt" ;;
  *) LOCK="$ROOT/requirements/lock-all.txt" ;;
esac
TORCH="$(sed -n 's/^torch = "\(.*\)"$/\1/p' pyproject.toml)"
have_torch="$("$VENV/bin/python" -c "import torch; print(torch.__version__.split('+')[0])" 2>/dev/null || true)"
if [ "$have_torch" != "$TORCH" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
    echo "[bootstrap] CUDA GPU found: installing PyTorch $TORCH (the default build)"
    "${PIP[@]}" install "torch==$TORCH"
  else
    echo "[bootstrap] no CUDA GPU: installing the CPU build of PyTorch $TORCH first"
    "${PIP[@]}" install "torch==$TORCH" 2>/dev/null \
      || "${PIP[@]}" install "torch==$TORCH" --index-url https://download.pytorch.org/whl/cpu
  fi
fi

# Reinstall only when the lock (or pyproject.toml) changes.
stamp="$VENV/.toxlib-lock-$(cat "$LOCK" pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "[bootstrap] installing the locked releases of ${LOCK#$ROOT/}, then toxlib (editable)"
  "${PIP[@]}" install --no-deps --require-hashes -r "$LOCK"
  "${PIP[@]}" install --no-deps --no-build-isolation -e .
  rm -f "$VENV"/.toxlib-lock-*
  touch "$stamp"
fi

# Offline machines: use ../shared/data as the data mirror when it exists and none is set.
if [ -z "${TOXLIB_DATA_MIRROR:-}" ] && [ -d "$ROOT/../shared/data" ]; then
  export TOXLIB_DATA_MIRROR="$(cd "$ROOT/../shared/data" && pwd)"
  echo "[bootstrap] TOXLIB_DATA_MIRROR=$TOXLIB_DATA_MIRROR"
fi
export PATH="$VENV/bin:$PATH"
