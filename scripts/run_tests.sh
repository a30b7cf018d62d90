#!/usr/bin/env bash
# Run the test suite: set up .venv with the dev and ray extras, make sure Debian's chromium is there for the
# browser test, then ruff (lint, configured in pyproject.toml) and pytest (the smoke book build and the browser
# check included), then, for a full run, the audit of a slice of the sample record on this CPU (data/record/:
# fails when fewer than 95% of the recomputed rows match). A full run spreads the tests over pytest workers, one per
# core; extra arguments go to one pytest process (and skip the audit).
set -euo pipefail
TOXLIB_EXTRAS=book,serve,dev,ray  # book: the smoke book; serve: the endpoint's tests; ray: a local Ray cluster
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[tests] installing Debian's chromium for the browser test"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "[tests] chromium not found and cannot be installed here: the browser test will fail (install chromium)"
  fi
fi
python -m ruff check toxlib tests notebooks
# converted and adapted models (0.5-1 GB each) go under the temporary folder and the model cache: a full disk fails
# tests far from the cause, so the free space is printed first
for folder in "${TMPDIR:-/tmp}" "${XDG_CACHE_HOME:-$HOME/.cache}"; do
  mkdir -p "$folder" && echo "[tests] free disk under $folder: $(df -h --output=avail "$folder" | tail -1 | tr -d ' ')"
done
if [ $# -eq 0 ]; then
  # The whole suite on every core: a pytest worker per core (at most 4), each torch process with the cores its worker
  # has (two torch processes at two threads each on two cores contend and run several times slower). A third worker
  # on two cores made the run slower: the Ray tests' workers and the smoke book's kernels then contend.
  # --dist loadfile keeps a file's tests on one worker, so a file's fixtures (the smoke book) build once; the files
  # go out in the order tests/conftest.py collects them (the slow ones first), not by their number of tests.
  cores="$(python -c 'import os; print(len(os.sched_getaffinity(0)))')"
  workers=$(( cores < 4 ? cores : 4 ))
  threads=$(( cores / workers ))
  TOXLIB_THREADS=$threads OMP_NUM_THREADS=$threads \
    python -m pytest -ra --durations=30 -n "$workers" --dist loadfile --no-loadscope-reorder
else
  python -m pytest -ra --durations=15 "$@"
fi
if [ $# -eq 0 ] && [ -f data/record/keys.csv ]; then
  # a new folder each run: the audit refuses an --out file that exists unless told to resume it
  python -m toxlib record audit --slice 3 --keys 3 --out "$(mktemp -d)/toxlib-record-audit.csv"
fi
