#!/usr/bin/env bash
# Regenerate the lock files from pyproject.toml's ranges: the exact release and sha256 of every package the README's
# two commands install (requirements/lock-all.txt: the core and the book, serve, dev and ray extras, for the tests;
# requirements/lock-book.txt: the core and the book extra, for the book build, the same releases), the weights
# packages installed without their dependencies, and environment.yml's pins.
#
# The sample record's rows were computed with the locked releases (torch and transformers above all): after a new
# lock, rebuild the environment (rm -r .venv) and re-audit the record on it before committing the lock
# (python -m toxlib record audit --slice 20 --history); a lower match means the record must be rewritten.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PY" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "pip-tools==7.6.2"
# pip-compile reads the project's metadata: a copy of pyproject.toml beside an empty package is enough
mkdir -p "$work/src/toxlib" && touch "$work/src/toxlib/__init__.py"
cp "$ROOT/pyproject.toml" "$ROOT/README.md" "$work/src/"
torch="$(sed -n 's/^torch = "\(.*\)"$/\1/p' "$ROOT/pyproject.toml")"  # [tool.toxlib] torch: the release to lock
echo "torch==$torch" > "$work/constraints.txt"
compile() {  # compile OUT EXTRA... : the project with these extras, hashes, under the constraints
  local out="$1"; shift
  (cd "$work/src" && "$work/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
     --no-header --constraint "$work/constraints.txt" "${@/#/--extra=}" -o "$out" pyproject.toml)
}
compile "$work/all.txt" book serve dev ray
cp "$work/all.txt" "$work/constraints-all.txt"
echo "-c $work/constraints-all.txt" >> "$work/constraints.txt"  # the book's lock: the same releases, fewer of them
compile "$work/book.txt" book
mkdir -p "$work/nodeps"
no_deps="$(sed -n 's/^install-no-deps = \[\(.*\)\]/\1/p' "$ROOT/pyproject.toml" | tr -d '",')"
"$work/venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work/nodeps" $no_deps
"$work/venv/bin/python" "$ROOT/scripts/lock_finish.py" "$ROOT" "$work" $no_deps
echo "[lock] wrote requirements/lock-all.txt, requirements/lock-book.txt and environment.yml; now re-audit the record"
