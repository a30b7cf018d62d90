#!/usr/bin/env bash
# The roofline benchmarks (generate, perplexity, self-debias, and the generation ceilings) on a CUDA machine, on
# random-weight copies of the bundled models' architectures (toxlib.benchmarks.random_weights): their weights are too
# large to send there.
#
# Usage: bash scripts/gpu_bench.sh SOURCES OUT
#   SOURCES: one folder per model, named after it, with config.json and the tokenizer files (tokenizer.json may be
#            gzipped as tokenizer.json.gz); make it here with
#            from the folders toxlib.models.bundled.converted_dir gives (the weights are not needed)
#   OUT:     a folder for one log and one JSON line per benchmark and model
# Needs data/downloads (RealToxicityPrompts' sample, ToxiGen, the debiasing prompts) and a python with torch,
# transformers, pandas and scipy. Figures are the last line of each log; ENV.txt records the machine.
set -uo pipefail
src=${1:?folder with one subfolder per model}
out=${2:?output folder}
py=${PYTHON:-python3}
mkdir -p "$out"
for gz in "$src"/*/tokenizer.json.gz; do
    [ -e "$gz" ] && gunzip -kf "$gz"
done
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
    "$py" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} > "$out/ENV.txt" 2>&1
export PYTHONUNBUFFERED=1 TOXLIB_CACHE_DIR=${TOXLIB_CACHE_DIR:-/tmp/toxlib-cache}
status=0
for folder in "$src"/*/; do
    name=$(basename "$folder")
    for bench in ${BENCHES:-perplexity self-debias generate ceilings}; do
        args=(-m toxlib bench "$bench" --model "${folder%/}" --random-weights)
        [ "$bench" = generate ] && args+=(${GENERATE_ARGS:-})
        echo "== $name $bench"
        "$py" "${args[@]}" > "$out/$name-$bench.log" 2>&1 || status=1
        tail -n 1 "$out/$name-$bench.log" | tee "$out/$name-$bench.json"
    done
done
exit $status
