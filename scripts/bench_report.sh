#!/usr/bin/env bash
# Time the report card and the Your model page at two commits of this clone, alternately (OLD, HEAD, OLD, HEAD ...,
# so a drift in the machine's speed falls on both), each run a whole process from start to exit:
#   bundled-decide  python -m toxlib report --model smollm2-135m --budget decide   (the sample record holds its rows)
#   tiny-smoke      python -m toxlib report --model <a tiny random Llama> --budget smoke   (every row computed)
#   your-model      python -m toxlib run book/your_model.ipynb -o <a temporary copy>        (the page, default values)
# Every run starts from an empty report folder and an empty user cache (TOXLIB_CACHE_DIR), with the bundled models
# already converted (TOXLIB_MODEL_CACHE: the machine's, as for a user who ran toxlib before) and the data files
# this clone has fetched (TOXLIB_DATA_DIR: this clone's data/downloads, with the mirror beside the clone, as the
# scripts set it, for any file it lacks). The working tree is
# timed as it is (commit it first); OLD is checked out beside it (git worktree) and run with this clone's .venv.
# Prints one JSON line per run, then the medians; usage: bash scripts/bench_report.sh OLD_COMMIT [RUNS (3)]
set -euo pipefail
old="${1:?usage: bash scripts/bench_report.sh OLD_COMMIT [RUNS]}"
runs="${2:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
models="$("$python" -c 'from toxlib.store import paths; print(paths.model_cache_dir())')"
data="${TOXLIB_DATA_DIR:-$root/data/downloads}"
if [ -z "${TOXLIB_DATA_MIRROR:-}" ] && [ -d "$root/../shared/data" ]; then
  export TOXLIB_DATA_MIRROR="$(cd "$root/../shared/data" && pwd)"
fi
work="$(mktemp -d)"
git -C "$root" worktree add --detach "$work/old" "$old" >/dev/null 2>&1
trap 'git -C "$root" worktree remove --force "$work/old"; rm -rf "$work"' EXIT
"$python" -c "from toxlib.models.tiny import tiny_causal_lm; tiny_causal_lm('$work/tiny')" >/dev/null 2>&1
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

command_for() {  # benchmark -> the command line, run in the tree timed
  case "$1" in
    bundled-decide) echo "$python -m toxlib report --model smollm2-135m --budget decide --out $work/out" ;;
    tiny-smoke) echo "$python -m toxlib report --model $work/tiny --name tiny --budget smoke --out $work/out" ;;
    your-model) echo "$python -m toxlib run book/your_model.ipynb -o $work/out/your_model.ipynb" ;;
  esac
}

time_one() {  # benchmark, label, tree -> one JSON line
  rm -rf "$work/out" "$work/cache" && mkdir -p "$work/out"
  local start end
  start="$(date +%s.%N)"
  if ! (cd "$3" && PYTHONPATH="$3" TOXLIB_CACHE_DIR="$work/cache" TOXLIB_MODEL_CACHE="$models" TOXLIB_DATA_DIR="$data" \
        $(command_for "$1") >"$work/log" 2>&1); then
    echo "{\"benchmark\": \"$1\", \"tree\": \"$2\", \"failed\": true}"; tail -20 "$work/log" >&2; return 1
  fi
  end="$(date +%s.%N)"
  printf '{"benchmark": "%s", "tree": "%s", "commit": "%s", "wall_s": %.1f, "cpu": "%s", "cores": %s}\n' "$1" "$2" \
    "$(git -C "$3" rev-parse --short=12 HEAD)" "$(echo "$end - $start" | bc)" "$cpu" "$(nproc)"
}

lines="$work/lines.jsonl"
for benchmark in bundled-decide tiny-smoke your-model; do
  for _ in $(seq "$runs"); do
    time_one "$benchmark" old "$work/old" | tee -a "$lines"
    time_one "$benchmark" new "$root" | tee -a "$lines"
  done
done
"$python" - "$lines" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for benchmark in dict.fromkeys(r["benchmark"] for r in rows):
    walls = {tree: [r["wall_s"] for r in rows if r["benchmark"] == benchmark and r["tree"] == tree] for tree in ("old", "new")}
    old, new = (statistics.median(walls[t]) for t in ("old", "new"))
    print(json.dumps({"benchmark": benchmark, "median_old_s": old, "median_new_s": new, "ratio_new_old": round(new / old, 3),
                      "runs": len(walls["new"])}))
EOF
