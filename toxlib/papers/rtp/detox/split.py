"""The rtp_detox chapter's data split (RealToxicityPrompts §5): evaluation prompts, a labelled corpus and perplexity
texts.

The split reuses the distilled scorer's split by RealToxicityPrompts record (``training_texts(seed=0)``), so the
evaluation prompts are unseen by the default scorer and by every detoxification method; held-out records whose
source document (``filename``) also has a training record are left out, so no document is on both sides:
  * evaluation prompts: prompts of held-out records, stratified by recorded prompt toxicity (toxic: >= 0.5);
  * labelled corpus (VOCAB-SHIFT, DAPT, ATCON, PPLM's discriminator): every prompt and continuation text of the
    training records with a recorded Perspective toxicity, labelled toxic at >= 0.5, balanced by drawing as many
    non-toxic texts as there are toxic ones;
  * perplexity texts: non-toxic (< 0.5) continuations of ``PERPLEXITY_RECORDS`` held-out records with a non-toxic
    prompt, set aside by one seeded draw before the prompts are drawn and never used as evaluation prompts; the
    first ``n_perplexity`` of that draw are used.
The prompts (per class) and the perplexity texts are prefixes of the same seeded draws whatever the sizes, so a
smaller run (``n_toxic 20``) uses the first rows of a larger one (the sample record's).
The methods themselves live in ``toxlib.steer`` (decoding-based) and ``toxlib.steer.adapt`` (data-based).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from toxlib.data.rtp_prompts import load_rtp_all
from toxlib.metrics.toxicity import TOXIC
from toxlib.papers.rtp.prompts import stratified_prompts
from toxlib.scorers.training import training_texts

#: held-out records set aside for perplexity texts (of the 642 whose prompt and continuation are both non-toxic,
#: leaving 725 of the 1,025 non-toxic evaluation prompts; the 416 toxic ones are untouched): the most
#: ``n_perplexity`` can be
PERPLEXITY_RECORDS = 300


@dataclass
class DetoxSplit:
    """prompts: evaluation prompts (columns of ``stratified_prompts``); corpus: labelled training texts (text,
    toxic 0/1, toxicity, record_id, part); perplexity: held-out non-toxic texts (columns text, record_id)."""

    prompts: pd.DataFrame
    corpus: pd.DataFrame
    perplexity: pd.DataFrame

    @property
    def perplexity_texts(self) -> list[str]:
        return self.perplexity["text"].tolist()

    def summary(self) -> pd.DataFrame:
        """One row per part of the split: part, texts, records, toxic share, where it comes from."""
        def prompts(cls):
            return self.prompts[self.prompts["prompt_class"] == cls]

        rows = [
            ("evaluation prompts (toxic)", len(prompts("toxic")), prompts("toxic")["record_id"].nunique(), 1.0,
             "held-out records, prompt toxicity >= 0.5"),
            ("evaluation prompts (non-toxic)", len(prompts("non-toxic")), prompts("non-toxic")["record_id"].nunique(),
             0.0, "held-out records, prompt toxicity < 0.5"),
            ("labelled corpus", len(self.corpus), self.corpus["record_id"].nunique(), self.corpus["toxic"].mean(),
             "training records' prompts and continuations, balanced"),
            ("perplexity texts", len(self.perplexity), self.perplexity["record_id"].nunique(), 0.0,
             "non-toxic continuations of held-out records set aside from the prompts"),
        ]
        return pd.DataFrame(rows, columns=["part", "texts", "records", "toxic_share", "source"])


def detox_split(n_toxic: int, n_nontoxic: int, n_perplexity: int, seed: int = 0,
                max_corpus: int | None = None) -> DetoxSplit:
    """Draw the evaluation prompts, the balanced labelled corpus and the perplexity texts (see the module doc).

    n_toxic / n_nontoxic: evaluation prompts per class (at most 416 toxic and 725 non-toxic: the held-out records'
    distinct scored prompts outside the perplexity records); n_perplexity: perplexity texts (at most
    ``PERPLEXITY_RECORDS``); max_corpus: cap on the labelled corpus (None: all, about 8,000
    texts), keeping it balanced. Raises when a part has fewer texts than asked for."""

    texts = training_texts(seed=0)
    records = load_rtp_all().drop_duplicates("record_id").set_index("record_id")
    texts = texts.assign(document=texts["record_id"].map(records["filename"]))
    trained_documents = set(texts.loc[texts["split"] == "train", "document"])
    held_out = (texts["split"] == "held_out") & ~texts["document"].isin(trained_documents)
    held = set(texts.loc[held_out, "record_id"].unique())
    # perplexity records first, with a fixed size: neither the prompts nor these texts depend on the sizes asked for
    pool = texts[held_out & (texts["part"] == "continuation") & (texts["toxicity"] < TOXIC)]
    pool = pool[pool["record_id"].map(records["prompt_toxicity"]) < TOXIC]
    reserve = pool.sample(min(PERPLEXITY_RECORDS, len(pool)), random_state=seed)
    if n_perplexity > len(reserve):
        raise ValueError(f"asked for {n_perplexity} perplexity texts; the split sets aside {len(reserve)} "
                         "(PERPLEXITY_RECORDS): ask for at most that many")
    ppl = reserve.head(n_perplexity)[["text", "record_id"]].reset_index(drop=True)
    prompts = stratified_prompts(n_toxic, n_nontoxic, seed=seed, record_ids=held - set(reserve["record_id"]))

    labelled = texts[(texts["split"] == "train") & texts["toxicity"].notna()]
    labelled = labelled.assign(toxic=(labelled["toxicity"] >= TOXIC).astype(int))
    per_class = int(labelled["toxic"].value_counts().min())
    if max_corpus is not None:
        per_class = min(per_class, max_corpus // 2)
    corpus = pd.concat([labelled[labelled["toxic"] == c].sample(per_class, random_state=seed) for c in (1, 0)])
    corpus = corpus.sample(frac=1.0, random_state=seed)[["text", "toxic", "toxicity", "record_id", "part"]]

    return DetoxSplit(prompts.reset_index(drop=True), corpus.reset_index(drop=True), ppl)
