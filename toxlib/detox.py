"""RealToxicityPrompts' detoxification experiment (its Table 3): the data split, scored runs per method, the table.

The split is by RealToxicityPrompts record, reusing the distilled scorer's split (``training_texts(seed=0)``), so
the evaluation prompts are unseen by the default scorer and by every detoxification method:
  * evaluation prompts: prompts of held-out records, stratified by recorded prompt toxicity (toxic: >= 0.5);
  * labelled corpus (VOCAB-SHIFT, DAPT, ATCON, PPLM's discriminator): every prompt and continuation text of the
    training records with a recorded Perspective toxicity, labelled toxic at >= 0.5, balanced by drawing as many
    non-toxic texts as there are toxic ones;
  * perplexity texts: non-toxic (< 0.5) continuations of held-out records that are not evaluation prompts.
The methods themselves live in ``toxlib.steer`` (decoding-based) and ``toxlib.adapt`` (data-based).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from toxlib.generate import RTP_SAMPLING, DecodingConfig
from toxlib.metrics.toxicity import TOXIC
from toxlib.rtp import prompted, stratified_prompts, unprompted_pool, with_scores


@dataclass
class DetoxSplit:
    """prompts: evaluation prompts (columns of ``stratified_prompts``); corpus: labelled training texts (text,
    toxic 0/1, toxicity, record_id, part); perplexity_texts: held-out non-toxic texts (list of str)."""

    prompts: pd.DataFrame
    corpus: pd.DataFrame
    perplexity_texts: list[str]

    def summary(self) -> pd.DataFrame:
        """One row per part of the split: part, texts, records, toxic share, where it comes from."""
        rows = [
            ("evaluation prompts (toxic)", (self.prompts["prompt_class"] == "toxic").sum(),
             self.prompts["record_id"].nunique(), 1.0, "held-out records, prompt toxicity >= 0.5"),
            ("evaluation prompts (non-toxic)", (self.prompts["prompt_class"] == "non-toxic").sum(), None, 0.0,
             "held-out records, prompt toxicity < 0.5"),
            ("labelled corpus", len(self.corpus), self.corpus["record_id"].nunique(), self.corpus["toxic"].mean(),
             "training records' prompts and continuations, balanced"),
            ("perplexity texts", len(self.perplexity_texts), None, 0.0,
             "non-toxic continuations of other held-out records"),
        ]
        return pd.DataFrame(rows, columns=["part", "texts", "records", "toxic_share", "source"])


def detox_split(n_toxic: int, n_nontoxic: int, n_perplexity: int, seed: int = 0,
                max_corpus: int | None = None) -> DetoxSplit:
    """Draw the evaluation prompts, the balanced labelled corpus and the perplexity texts (see the module doc).

    n_toxic / n_nontoxic: evaluation prompts per class (held-out records hold 422 toxic and about 1,000 non-toxic
    prompts); n_perplexity: perplexity texts; max_corpus: cap on the labelled corpus (None: all, about 8,000
    texts), keeping it balanced. Raises when a part has fewer texts than asked for."""
    from toxlib.scorers.training import training_texts

    texts = training_texts(seed=0)
    held = texts.loc[texts["split"] == "held_out", "record_id"].unique()
    prompts = stratified_prompts(n_toxic, n_nontoxic, seed=seed, record_ids=held)

    labelled = texts[(texts["split"] == "train") & texts["toxicity"].notna()]
    labelled = labelled.assign(toxic=(labelled["toxicity"] >= TOXIC).astype(int))
    per_class = int(labelled["toxic"].value_counts().min())
    if max_corpus is not None:
        per_class = min(per_class, max_corpus // 2)
    corpus = pd.concat([labelled[labelled["toxic"] == c].sample(per_class, random_state=seed) for c in (1, 0)])
    corpus = corpus.sample(frac=1.0, random_state=seed)[["text", "toxic", "toxicity", "record_id", "part"]]

    pool = texts[(texts["split"] == "held_out") & (texts["part"] == "continuation") & (texts["toxicity"] < TOXIC)
                 & ~texts["record_id"].isin(set(prompts["record_id"]))]
    if n_perplexity > len(pool):
        raise ValueError(f"asked for {n_perplexity} perplexity texts; the held-out records have {len(pool)}")
    ppl = pool.sample(n_perplexity, random_state=seed)["text"].tolist()
    return DetoxSplit(prompts.reset_index(drop=True), corpus.reset_index(drop=True), ppl)


def scored_run(lm, method: str, split: DetoxSplit, steering=None, k: int = 25, n_unprompted: int = 20,
               config: DecodingConfig = RTP_SAMPLING, scorer: str = "distilled", progress: bool = True,
               prompt_subset: pd.DataFrame | None = None) -> pd.DataFrame:
    """Generate ``k`` samples for every evaluation prompt (or ``prompt_subset``) and ``n_unprompted`` groups of
    ``k`` unprompted samples, with ``lm`` under ``steering``, and score them.

    Unprompted samples are one pool of n_unprompted * k continuations of the empty prompt, cut into
    n_unprompted groups of k (each group plays a prompt: prompt_id "unprompted-<i>"), so the unprompted expected
    maximum is over k generations like the prompted ones. Returns one row per generation: the columns of
    ``toxlib.generate.generate`` plus method, prompt_class ("toxic" / "non-toxic" / "unprompted") and the
    scorer's columns."""
    config = config.with_(num_samples=k)
    prompts = split.prompts if prompt_subset is None else prompt_subset
    parts = [prompted(lm, prompts, config, scorer, progress, steering)]
    if n_unprompted:
        pool = unprompted_pool(lm, n_unprompted * k, config, progress, steering)
        pool = pool.assign(prompt_id=[f"unprompted-{i // k}" for i in pool["sample_idx"]],
                           sample_idx=pool["sample_idx"] % k, prompt_class="unprompted")
        parts.append(with_scores(pool, scorer, progress=progress))
    return pd.concat(parts, ignore_index=True).assign(method=method)


def perplexity_row(method: str, scores: pd.DataFrame) -> dict:
    """Perplexity of held-out text under one method, from ``steered_nll`` rows: method, perplexity over the texts
    the method can produce (exp of total NLL / total tokens over finite rows), n_texts, n_impossible (texts
    containing a token sequence the method forbids: infinite NLL, e.g. a banned word)."""
    finite = np.isfinite(scores["nll_sum"])
    ppl = float(np.exp(scores.loc[finite, "nll_sum"].sum() / scores.loc[finite, "n_tokens"].sum()))
    return {"method": method, "perplexity": ppl, "n_texts": int(len(scores)), "n_impossible": int((~finite).sum())}


def _cached_weights(kind: str, lm, corpus: pd.DataFrame, settings: dict, train, load):
    """Train once per (kind, model weights, dtype, corpus, settings) and keep the result under
    ``cache_dir()/detox``; later calls load the file. ``train()`` returns an object with ``.save(path)``;
    ``load(path)`` reads it back. Written to a temporary file and renamed, so an interrupted run leaves nothing."""
    from toxlib.adapt import corpus_sha256
    from toxlib.generate.config import stable_hash
    from toxlib.paths import cache_dir

    key = stable_hash({"kind": kind, "weights": lm.weights_id, "dtype": str(lm.dtype), "corpus": corpus_sha256(corpus),
                       "settings": settings})[:16]
    path = cache_dir() / "detox" / f"{kind}-{key}.safetensors"
    if path.exists():
        return load(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.safetensors")
    train().save(partial)
    partial.replace(path)
    return load(path)


def vocab_shift_weights(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.vocab_shift.train_vocab_shift(lm, corpus, **settings)``, cached (see ``_cached_weights``)."""
    from toxlib.steer.vocab_shift import VocabShiftWeights, train_vocab_shift

    return _cached_weights("vocab-shift", lm, corpus, settings, lambda: train_vocab_shift(lm, corpus, **settings),
                           VocabShiftWeights.load)


def discriminator(lm, corpus: pd.DataFrame, **settings):
    """``toxlib.steer.pplm.train_discriminator(lm, corpus, **settings)``, cached (see ``_cached_weights``)."""
    from toxlib.steer.pplm import Discriminator, train_discriminator

    return _cached_weights("pplm-discriminator", lm, corpus, settings,
                           lambda: train_discriminator(lm, corpus, **settings), Discriminator.load)
