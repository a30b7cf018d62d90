# Sourced by build_book.sh and run_tests.sh: make .venv with toxlib and its pinned dependencies.
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

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
    echo "[bootstrap] CUDA GPU found: installing the default PyTorch build"
    "${PIP[@]}" install "torch>=2.3,<3"
  else
    echo "[bootstrap] no CUDA GPU: installing the CPU build of PyTorch first"
    "${PIP[@]}" install "torch==2.13.0" 2>/dev/null \
      || "${PIP[@]}" install "torch>=2.3,<3" --index-url https://download.pytorch.org/whl/cpu
  fi
fi

# Reinstall only when the declared dependencies change or an extra is asked for that the last install lacked.
hash="$(cat pyproject.toml | sha256sum | cut -c1-16)"
installed=""
for done in "$VENV"/.toxlib-install-"$hash"*; do
  [ -f "$done" ] && installed="${done##*/.toxlib-install-$hash}"
done
missing=""
if [ ! -f "$VENV/.toxlib-install-$hash${installed}" ]; then
  missing=yes
else
  for extra in ${EXTRAS//,/ }; do
    case ",${installed#-}," in *",$extra,"*) ;; *) missing=yes ;; esac
  done
fi
if [ -n "$missing" ]; then
  EXTRAS="$(printf '%s\n' ${EXTRAS//,/ } ${installed#-} | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)"
  stamp="$VENV/.toxlib-install-$hash${EXTRAS:+-$EXTRAS}"
  echo "[bootstrap] installing toxlib (editable)${EXTRAS:+ with extras [$EXTRAS]}"
  "${PIP[@]}" install -e ".${EXTRAS:+[$EXTRAS]}"
  no_deps="$(sed -n 's/^install-no-deps = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')"
  echo "[bootstrap] installing without their dependencies: $no_deps"
  "${PIP[@]}" install --no-deps $no_deps
  rm -f "$VENV"/.toxlib-install-*
  touch "$stamp"
fi

# Offline machines: use ../shared/data as the data mirror when it exists and none is set.
if [ -z "${TOXLIB_DATA_MIRROR:-}" ] && [ -d "$ROOT/../shared/data" ]; then
  export TOXLIB_DATA_MIRROR="$(cd "$ROOT/../shared/data" && pwd)"
  echo "[bootstrap] TOXLIB_DATA_MIRROR=$TOXLIB_DATA_MIRROR"
fi
export PATH="$VENV/bin:$PATH"
