"""Training the distilled Perspective scorer on RealToxicityPrompts texts (``toxlib.scorers.distilled``).

Data (``training_texts``): the prompt and continuation texts of every RTP record in the three public subsets, with
the Perspective scores recorded for them; one row per distinct text. Texts from SASS, TweetEval, ToxiGen and
ImplicitHate are never used: they are evaluation sets in other chapters. The held-out split is drawn by record
(a record's prompt and continuation fall on the same side, so no document leaks across), with a fixed seed; a share
of the remaining (training) records is then set aside, again by record, to fit the calibrators
(``toxlib.scorers.calibration``), so the network trains on the rest, the calibrators on texts the network never saw,
and the held-out texts judge both.

Recipe (``TrainingConfig``): LoRA (rank 32, 6 epochs) on every linear layer of the encoder plus a fresh linear
head, binary cross-entropy against Perspective's soft scores (missing scores masked), AdamW, linear warm-up and decay,
length-bucketed batches; then one isotonic map per attribute fitted on the calibration records. Deterministic on CPU
for a given seed and thread count.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from toxlib.common.progress import quiet_peft, tqdm
from toxlib.data.rtp_prompts import load_rtp_all
from toxlib.metrics.agreement import agreement
from toxlib.models.batching import bucketed_batches
from toxlib.models.device import configure_cpu_threads
from toxlib.models.schedule import linear_warmup_decay
from toxlib.scorers.calibration import CALIBRATION_FILE, apply_calibrators, fit_calibrators, save_calibrators
from toxlib.scorers.distilled import (
    SCORER_META_FILE,
    TARGETS,
    PerspectiveEmulator,
    base_encoder,
    predict,
    save_emulator,
)

#: Bump when the recipe or the data selection changes (it is part of the scorer's version).
SCORER_RECIPE_VERSION = "minilm-rtp-3"  # 3: 6 epochs, LoRA rank 32 (2: 3 epochs, rank 16)


@dataclass(frozen=True)
class TrainingConfig:
    """The recipe. ``held_out``: share of records held out for evaluation; ``calibration``: share of the other
    (training) records set aside to fit the calibrators; ``limit``: train on only the first ``limit`` training
    texts (smoke runs)."""

    epochs: int = 6
    batch_size: int = 32
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup: float = 0.06
    lora_r: int = 32
    lora_alpha: int = 32
    lora_dropout: float = 0.1
    head_dropout: float = 0.1
    seed: int = 0
    held_out: float = 0.2
    calibration: float = 0.15
    limit: int | None = None


def training_texts(seed: int = 0, held_out: float = 0.2, calibration: float = 0.15) -> pd.DataFrame:
    """One row per distinct RTP text: text, record_id, part ("prompt"/"continuation"), split ("train" or
    "held_out"), calibration (True for the "train" rows of the records set aside to fit the calibrators: the
    network trains on "train" rows that are not calibration rows), and the 8 Perspective scores (``TARGETS``; NaN
    where Perspective gave none). Texts without any score are dropped.

    The held-out records are drawn first, so they do not depend on ``calibration``; the calibration records are a
    second draw from the same generator among the training records (a share ``calibration`` of them)."""
    records = load_rtp_all()
    parts = []
    for part in ("prompt", "continuation"):
        frame = records[["record_id", f"{part}_text", *(f"{part}_{a}" for a in TARGETS)]].copy()
        frame.columns = ["record_id", "text", *TARGETS]
        frame.insert(2, "part", part)
        parts.append(frame)
    texts = pd.concat(parts, ignore_index=True).drop_duplicates("text").dropna(how="all", subset=list(TARGETS))
    ids = np.sort(texts["record_id"].unique())
    rng = np.random.default_rng(seed)
    held = set(rng.choice(ids, size=round(held_out * len(ids)), replace=False))
    train_ids = np.array([i for i in ids if i not in held])
    calibrating = set(rng.choice(train_ids, size=round(calibration * len(train_ids)), replace=False))
    texts.insert(3, "split", np.where(texts["record_id"].isin(held), "held_out", "train"))
    texts.insert(4, "calibration", texts["record_id"].isin(calibrating).to_numpy())
    return texts.reset_index(drop=True)


def train_emulator(texts: pd.DataFrame, config: TrainingConfig = TrainingConfig(), progress: bool = True,
                   threads: int | None = None):
    """Train on the rows of ``texts`` (columns text and ``TARGETS``, as from ``training_texts``, already restricted
    to the training split). Returns (model in eval mode with the peft adapter attached, tokenizer, metadata dict with
    the config, the counts and the wall time)."""
    from peft import LoraConfig, get_peft_model

    configure_cpu_threads(threads)
    torch.manual_seed(config.seed)
    rows = texts.iloc[: config.limit] if config.limit else texts
    encoder, tokenizer = base_encoder()
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=["query", "key", "value", "dense"])
    with quiet_peft():
        model = PerspectiveEmulator(get_peft_model(encoder, lora), dropout=config.head_dropout)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    steps = config.epochs * math.ceil(len(rows) / config.batch_size)
    warm = max(1, round(config.warmup * steps))
    schedule = linear_warmup_decay(optimizer, warm, steps)
    ids = tokenizer(rows["text"].tolist(), truncation=True, max_length=128)["input_ids"]
    targets = torch.tensor(rows[list(TARGETS)].to_numpy(), dtype=torch.float32)
    generator = torch.Generator().manual_seed(config.seed)
    model.train()
    started = time.perf_counter()
    bar = tqdm(total=steps, disable=not progress, desc="training the distilled scorer", unit="batch")
    for _ in range(config.epochs):
        for batch in bucketed_batches([len(i) for i in ids], config.batch_size, generator):
            enc = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
            logits = model(enc["input_ids"], enc["attention_mask"])
            y = targets[batch]
            known = ~torch.isnan(y)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[known], y[known])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.4f}", refresh=False)
    bar.close()
    meta = {"version": SCORER_RECIPE_VERSION, "config": asdict(config), "train_texts": len(rows), "steps": steps,
            "train_seconds": round(time.perf_counter() - started, 1), "threads": torch.get_num_threads(),
            "torch": torch.__version__}
    return model.eval(), tokenizer, meta


def train_and_save(folder, config: TrainingConfig = TrainingConfig(), progress: bool = True,
                   threads: int | None = None, reuse: bool = True) -> dict:
    """Draw the split, train on its training part (less the calibration records), fit the calibrators on the
    calibration records, score the held-out part, and save the weights, ``calibration.json`` and ``training.json``
    to ``folder``. Returns the metadata: the recipe, counts, wall time and the held-out agreement per attribute
    ({attribute: {n, n_positive, pearson, spearman, auc, calibration_error}}, fp32 scores against Perspective):
    ``held_out`` for the calibrated scores (what the scorer gives), ``held_out_uncalibrated`` for the network's.

    reuse: when ``folder`` already holds a run of the same recipe (version, config, torch version), return its
    metadata without training again (the run is deterministic for a recipe; delete the folder to retrain)."""

    done = Path(folder) / SCORER_META_FILE
    if reuse and done.exists() and (Path(folder) / CALIBRATION_FILE).exists():
        meta = json.loads(done.read_text())
        if (meta.get("version"), meta.get("config"), meta.get("torch")) == (SCORER_RECIPE_VERSION, asdict(config),
                                                                           torch.__version__):
            return meta

    texts = training_texts(config.seed, config.held_out, config.calibration)
    training = texts["split"] == "train"
    model, tokenizer, meta = train_emulator(texts[training & ~texts["calibration"]], config, progress, threads)
    calibrating, held = texts[training & texts["calibration"]], texts[texts["split"] == "held_out"]
    calibrators = fit_calibrators(predict(model, tokenizer, calibrating["text"].tolist()), calibrating, TARGETS)
    raw = predict(model, tokenizer, held["text"].tolist())
    calibrated = apply_calibrators(raw, calibrators, TARGETS)
    meta["calibration_texts"], meta["held_out_texts"] = len(calibrating), len(held)
    meta["held_out"] = {a: agreement(held[a], calibrated[:, j]) for j, a in enumerate(TARGETS)}
    meta["held_out_uncalibrated"] = {a: agreement(held[a], raw[:, j]) for j, a in enumerate(TARGETS)}
    save_emulator(model, folder, meta)
    save_calibrators(calibrators, folder)
    return meta


def training_summary(meta: dict) -> dict:
    """One row of the chapter's training table from a ``training.json``: version, train_texts, train_seconds,
    threads, toxicity_pearson, toxicity_auc, toxicity_calibration_error (held-out, calibrated scores against
    Perspective; NaN for weights trained before calibration)."""
    tox = meta["held_out"]["toxicity"]
    return {**{k: meta[k] for k in ("version", "train_texts", "train_seconds", "threads")},
            "toxicity_pearson": tox["pearson"], "toxicity_auc": tox["auc"],
            "toxicity_calibration_error": tox.get("calibration_error", float("nan"))}
