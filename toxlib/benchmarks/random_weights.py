"""A model with a bundled (or any local) model's architecture and tokenizer but random weights, for measuring speed
where the real weights cannot go: a GPU machine that receives a few tens of MiB, while SmolLM2's weights are 270 MB
in bf16 and Gemma's 540 MB. Its texts are gibberish; its shapes, kernels and code paths are the real model's.

    folder = random_weights_folder("smollm2-135m")     # or a folder holding config.json and the tokenizer
    lm = toxlib.models.load(folder, dtype="bfloat16")
    # the same from the command line: python -m toxlib bench perplexity --model smollm2-135m --random-weights

Random initialisation (transformers' own, normal with the config's initializer_range) gives logits with a spread of
about 0.5, so the next-token distribution is close to uniform: top-p 0.9 then keeps most of the vocabulary, and the
nucleus sampler's cost is its worst case. So a copy of a model whose trained rows were measured
(``REAL_NUCLEUS_SHARES``: the share of rows each stage of the sampler's ladder resolves) gets a per-row temperature
fitted on a CPU (``fit_logit_scale``; the model side is ``toxlib.models.random_weights``): its rows then fall on the
ladder's stages in the trained model's proportions, and a benchmark on it measures the sampler's real cost. The fit,
its target and the shares measured when the fitted copy generates are kept in the folder (``LOGIT_SCALE_FILE``);
``bench generate`` reports where each nucleus was resolved.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import torch

from toxlib.benchmarks.prompts import bench_prompts
from toxlib.common.errors import ModelUnavailableError
from toxlib.generate import RTP_SAMPLING, NucleusStats
from toxlib.generate.api import encode_prompt, row_uniforms
from toxlib.generate.engine import decode_batch
from toxlib.generate.nucleus import K_LADDER
from toxlib.generate.nucleus_batch import stages
from toxlib.models import load
from toxlib.models.bundled import BUNDLED, converted_dir
from toxlib.models.random_weights import LOGIT_SCALE_FILE, direction, read_fit
from toxlib.store.paths import model_cache_dir, written_atomically

#: a source folder needs one of these (the tokenizer itself), besides config.json.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")
#: files copied from the source folder besides config.json: the tokenizer's, the generation settings, and a row
#: temperature fitted elsewhere for the same architecture and seed (``scripts/gpu_bench.sh --prepare`` fits it on a
#: CPU, so a GPU machine need not).
COPIED = ("generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
          "tokenizer.model", "chat_template.jinja", LOGIT_SCALE_FILE)


def source_folder(source: str | Path) -> Path:
    """The folder whose config and tokenizer are copied: a bundled model's converted folder, or ``source`` itself."""

    if str(source) in BUNDLED:
        return converted_dir(BUNDLED[str(source)])
    folder = Path(source).expanduser()
    if not (folder / "config.json").is_file() or not any((folder / n).is_file() for n in TOKENIZER_FILES):
        raise ModelUnavailableError(
            f"cannot build a random-weights model from {source!r}: give a bundled model's name or a folder with the "
            "model's config.json and its tokenizer (tokenizer.json or tokenizer.model, with tokenizer_config.json; "
            "a gzipped tokenizer.json must be unpacked first); its weights are not needed")
    return folder


def random_weights_folder(source: str | Path, dest: str | Path | None = None, seed: int = 0,
                          fit: bool = True) -> Path:
    """Build ``source``'s architecture with random weights (``torch.manual_seed(seed)``, then transformers'
    initialisation), save it with its tokenizer and return the folder, ready for ``toxlib.models.load``.

    source: a bundled model name (``known_models()``) or a folder with config.json and tokenizer files.
    dest: where to save; default ``model_cache_dir()/random-weights/<folder name>-<hash of config and seed>``, reused
      when it already holds the model (the same config and seed always give the same weights).
    fit: give the copy the row temperature fitted to its trained model's nucleus sizes (``fit_folder``) when
      ``REAL_NUCLEUS_SHARES`` knows them (``target_shares``); a folder that holds a fit keeps it.
    """
    dest = _random_copy(source, dest, seed)
    target = target_shares(source) if fit else None
    if target is not None and read_fit(dest) is None:
        fit_folder(dest, target)
    return dest


def _random_copy(source: str | Path, dest: str | Path | None, seed: int) -> Path:
    """The random-weights folder of ``random_weights_folder``, without a fit."""
    import transformers

    folder = source_folder(source)
    config_text = (folder / "config.json").read_text()
    if dest is None:
        digest = hashlib.sha256(f"{config_text}\x00{seed}".encode()).hexdigest()[:12]
        dest = model_cache_dir() / "random-weights" / f"{folder.name}-{digest}"
    dest = Path(dest)
    if (dest / "model.safetensors").is_file():
        return dest
    config = transformers.AutoConfig.from_pretrained(folder)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", *COPIED):
        if (folder / name).is_file():
            shutil.copyfile(folder / name, dest / name)
    (dest / "TOXLIB_SOURCE.txt").write_text(json.dumps(
        {"architecture_of": str(source), "weights": f"random, torch.manual_seed({seed})",
         "transformers": transformers.__version__}) + "\n")
    # the weights file last and atomically: its presence marks a finished folder
    with written_atomically(dest / "model.safetensors") as partial:
        model.save_pretrained(partial.parent / f".{dest.name}-saving", safe_serialization=True)
        shutil.move(partial.parent / f".{dest.name}-saving" / "model.safetensors", partial)
        shutil.rmtree(partial.parent / f".{dest.name}-saving")
    return dest


#: Share of rows each stage of the nucleus sampler's ladder resolves for a trained model: RealToxicityPrompts'
#: sampling (25 samples, 20 new tokens, top-p 0.9) of ``toxlib.benchmarks.prompts.bench_prompts(16)`` in float32
#: on a CPU (``generate(..., stats=NucleusStats())``): SmolLM2-135M 8,000 rows (5,516, 2,349, 135, 0); Gemma-3-270M
#: the first 8 of those prompts, 4,000 rows (3,122, 853, 25, 0). The H200 run with SmolLM2's real weights gave 70%,
#: 28%, 2% on 400 prompts (toxlib/benchmarks/README.md).
REAL_NUCLEUS_SHARES = {
    "smollm2-135m": {"256": 0.6895, "2048": 0.2936, "16384": 0.0169, "sort": 0.0},
    "gemma3-270m": {"256": 0.7805, "2048": 0.2133, "16384": 0.0063, "sort": 0.0},
}
#: the prompts the fit reads hidden states from, and those the fitted copy generates from to check it
FIT_PROMPTS, CHECK_PROMPTS = 16, 4
#: the grid of row scales the fit searches: natural-log steps of 1/16 from 1/4 to 1,024
SCALE_GRID = np.exp(np.arange(np.log(0.25), np.log(1024.0) + 1e-9, 1 / 16))


def target_shares(source: str | Path) -> dict | None:
    """``REAL_NUCLEUS_SHARES`` of the bundled model ``source`` names (by name, or a folder named after it), or
    None."""
    return REAL_NUCLEUS_SHARES.get(str(source)) or REAL_NUCLEUS_SHARES.get(Path(str(source)).name)


@torch.inference_mode()
def calibration_rows(model, sequences: list[list[int]], firsts: list[int] | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """(final normed hidden states (N, hidden) float32, their logits (N, V) float32) of token ``sequences``, each
    run alone: every position, or the positions ``firsts[i] - 1`` to the last but one (the contexts each new token
    of sequence i was sampled from, when it is a prompt of ``firsts[i]`` tokens followed by its new tokens)."""
    hidden = []
    for i, sequence in enumerate(sequences):
        states = model.model(input_ids=torch.tensor([sequence])).last_hidden_state[0].float()
        hidden.append(states if firsts is None else states[firsts[i] - 1:-1])
    y = torch.cat(hidden)
    head = model.get_output_embeddings()
    return y, torch.nn.functional.linear(y, head.weight.float())


def stage_table(logits: torch.Tensor, scales: np.ndarray, top_p: float, ladder: tuple[int, ...],
                softcap: float | None = None) -> np.ndarray:
    """(rows, len(scales)) int: the index in ``stages(V, top_p, ladder)`` of the stage that resolves each row's
    nucleus when its logits (rows, V) are multiplied by each scale (after a final soft-capping, if any): a row is
    resolved at k when its nucleus has at most k tokens."""
    names = stages(logits.shape[-1], top_p, ladder)
    limits = torch.tensor([k for k in names if k != "sort"], dtype=torch.long)
    out = np.empty((len(logits), len(scales)), dtype=np.int64)
    for start in range(0, len(logits), TABLE_ROWS):  # float64 copies of a few rows at a time
        ordered = logits[start:start + TABLE_ROWS].double().sort(-1, descending=True).values
        for j, scale in enumerate(scales):
            scaled = ordered * scale
            if softcap is not None:
                scaled = torch.tanh(scaled / softcap) * softcap
            probs = scaled.softmax(-1)
            size = ((probs.cumsum(-1) - probs) < top_p).sum(-1)
            out[start:start + len(ordered), j] = (size[:, None] > limits[None, :]).sum(-1).numpy()
    return out


def fit_logit_scale(model, y: torch.Tensor, logits: torch.Tensor, target: dict, top_p: float = 0.9,
                    ladder: tuple[int, ...] = K_LADDER, seed: int = 0) -> dict:
    """The row temperature exp(a + b z) (``toxlib.models.random_weights.RowTemperature``) whose rows' nucleus sizes
    fall on the ladder's stages closest to ``target`` ({stage name as str: share}), fitted on calibration rows
    (``calibration_rows``: normed hidden states y and their logits). A grid search over a (the log of the median
    scale) and b (its spread over rows, 0 to 3), the distance being the sum of the stages' absolute share
    differences. Returns the fit: a, b, mu, sigma (z's standardisation over the rows), direction_seed, top_p, the
    target, fitted_shares, fit_distance and calibration_rows."""
    d = direction(y.shape[-1], seed)
    projection = (y / y.norm(dim=-1, keepdim=True)) @ d
    mu, sigma = float(projection.mean()), float(projection.std())
    z = ((projection - mu) / sigma).numpy()
    softcap = getattr(model.config, "final_logit_softcapping", None)
    table = stage_table(logits, SCALE_GRID, top_p, ladder, softcap)
    names = [str(k) for k in stages(logits.shape[-1], top_p, ladder)]
    goal = np.array([float(target.get(name, 0.0)) for name in names])
    logs = np.log(SCALE_GRID)
    best = None
    for b in np.arange(0.0, 3.0001, 0.05):
        for a in logs:
            j = np.clip(np.rint((a + b * z - logs[0]) * 16).astype(int), 0, len(logs) - 1)
            shares = np.bincount(table[np.arange(len(z)), j], minlength=len(names)) / len(z)
            loss = float(np.abs(shares - goal).sum())
            if best is None or loss < best[0] - 1e-12:
                best = (loss, float(a), float(b), shares)
    loss, a, b, shares = best
    return {"a": a, "b": b, "mu": mu, "sigma": sigma, "direction_seed": seed, "top_p": top_p,
            "target_shares": {n: float(g) for n, g in zip(names, goal)},
            "fitted_shares": {n: round(float(v), 4) for n, v in zip(names, shares)},
            "fit_distance": round(loss, 4), "calibration_rows": len(z)}


def sampled(folder: Path, prompts: list[str]) -> tuple[dict, list[list[int]], list[int]]:
    """(shares of rows each ladder stage resolved, each row's prompt and new token ids, each row's prompt length)
    when the model in ``folder`` (its fit applied) decodes RealToxicityPrompts' samples of ``prompts`` on the CPU
    in float32, all in one batch."""
    lm = load(str(folder), device="cpu", dtype="float32")
    encoded = [encode_prompt(lm, p) for p in prompts]
    n, steps = RTP_SAMPLING.num_samples, RTP_SAMPLING.max_new_tokens
    uniforms = torch.stack([row_uniforms(RTP_SAMPLING.seed, p, i, steps) for p in prompts for i in range(n)])
    stats = NucleusStats()
    rows = decode_batch(lm.model, encoded, RTP_SAMPLING, uniforms, lm.stop_ids, lm.pad_id, stats=stats)
    sequences = [encoded[r // n] + row for r, row in enumerate(rows)]
    return ({str(k): round(v, 4) for k, v in stats.shares().items()}, sequences,
            [len(encoded[r // n]) for r in range(len(rows))])


def measured_shares(folder: Path, prompts: list[str]) -> dict:
    """The shares of ``sampled``."""
    return sampled(folder, prompts)[0]


#: generations of the fitted copy whose contexts the fit reads after its first fit on the prompts
FIT_ROUNDS = 5
#: contexts of each generation that join the calibration rows (a seeded sample), and rows ``stage_table`` sorts at once
ROUND_ROWS, TABLE_ROWS = 1000, 256


def fit_folder(folder: Path, target: dict, fit_prompts: int = FIT_PROMPTS, check_prompts: int = CHECK_PROMPTS,
               rounds: int = FIT_ROUNDS) -> dict:
    """Fit the row temperature of the random-weights model in ``folder`` to ``target`` on the CPU and keep it in
    ``folder / LOGIT_SCALE_FILE``.

    First ``fit_logit_scale`` on the hidden states of ``fit_prompts`` prompts. A generation's contexts are not a
    prompt's: the copy reads its own samples (with tied embeddings, a sampled token makes the next row peak on
    itself), and which it samples depends on the scale. So ``rounds`` times the copy generates (``check_prompts``
    prompts x 25 samples) with the fit so far, ``ROUND_ROWS`` of the contexts it sampled from join the calibration
    rows, and the fit is redone on all of them and averaged with the one before (a and b; a damped fixed point,
    since each fit moves the contexts). The generation closest to ``target`` (summed absolute share differences)
    is kept, with its ``measured_shares``; ``rounds_measured`` lists every round's. Returns the fit."""
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    lm = load(str(folder), device="cpu")
    y, logits = calibration_rows(model, [encode_prompt(lm, p) for p in bench_prompts(fit_prompts)])
    fit = fit_logit_scale(model, y, logits, target)
    names = list(fit["target_shares"])
    best, history = None, []
    for _ in range(rounds):
        _write_fit(folder, fit)
        shares, sequences, firsts = sampled(folder, bench_prompts(check_prompts))
        distance = round(sum(abs(shares.get(n, 0.0) - fit["target_shares"][n]) for n in names), 4)
        history.append({"a": round(fit["a"], 4), "b": round(fit["b"], 4), "measured_shares": shares,
                        "distance": distance})
        if best is None or distance < best[0]:
            best = (distance, {**fit, "measured_shares": shares, "measured_distance": distance})
        more_y, more_logits = calibration_rows(model, sequences, firsts)
        kept = torch.randperm(len(more_y), generator=torch.Generator().manual_seed(len(history)))[:ROUND_ROWS]
        y, logits = torch.cat([y, more_y[kept]]), torch.cat([logits, more_logits[kept]])
        new = fit_logit_scale(model, y, logits, target)
        fit = {**new, "a": (fit["a"] + new["a"]) / 2, "b": (fit["b"] + new["b"]) / 2}
    fit = {**best[1], "measured_on": f"{check_prompts} prompts x 25 samples x 20 new tokens, CPU, float32",
           "rounds_measured": history}
    _write_fit(folder, fit)
    return fit


def _write_fit(folder: Path, fit: dict) -> None:
    with written_atomically(folder / LOGIT_SCALE_FILE) as partial:
        partial.write_text(json.dumps(fit, indent=1) + "\n")


def bench_model(model: str, random_weights: bool = False) -> str:
    """The model a benchmark loads: ``model``, or with ``random_weights`` a folder with its architecture and random
    weights (``random_weights_folder``)."""
    return str(random_weights_folder(model)) if random_weights else model
