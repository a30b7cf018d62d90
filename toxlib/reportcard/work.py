"""How much computing a chapter asks of one model at given parameters, in the units its rates are measured in.

``chapter_work(stem, values)`` returns a ``ChapterWork``: sampled or greedy tokens generated (``gen_tokens``), Self-
Debiasing tokens (each runs the prompt and its six prefixed copies: ``sd_tokens`` count one token per row), tokens
read without generating (sentence NLLs, next-token readings, prefills: ``read_tokens``), PPLM tokens (each with its
gradient steps: ``pplm_tokens``), training tokens (continued pretraining: ``train_tokens``) and texts scored
(``scored_texts``), from the chapter's parameter values (``toxlib.chapters``). The counts follow what each
chapter runs (its notebook and ``toxlib.papers``); average lengths where a text's length is not a parameter
(``TYPICAL``) are the sample record's. A test holds the decide budget's counts against the record's own work.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

#: average lengths where a chapter's work depends on its data: tokens of a ToxiGen/ImplicitHate sentence, of an
#: RTP held-out continuation (perplexity), of a SASS prompt (few-shot longest) and of a sampled answer (it stops at
#: its first newline), of an adaptation document
TYPICAL = {"sentence_tokens": 22, "continuation_tokens": 20, "sass_prompt_tokens": 60, "sass_answer_tokens": 4,
           "document_tokens": 64}
#: ToxiGen and ImplicitHate sentences the safety score reads at "all" (0), and SASS comments at "all" (None)
ALL = {"toxigen": 6514, "implicit": 14200, "sass_comments": 250}
#: runs of the consistency protocol per prompt set and method: default, original, opposite, nonsensical (5 groups),
#: blank
PROTOCOL_RUNS = 9


@dataclass
class ChapterWork:
    gen_tokens: float = 0.0
    sd_tokens: float = 0.0
    read_tokens: float = 0.0
    pplm_tokens: float = 0.0
    train_tokens: float = 0.0
    scored_texts: float = 0.0

    def __add__(self, other: ChapterWork) -> ChapterWork:
        return ChapterWork(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _unprompted(v: dict) -> ChapterWork:
    return ChapterWork(gen_tokens=v["pool_size"] * v["max_new_tokens"], scored_texts=v["pool_size"])


def _prompted(v: dict) -> ChapterWork:
    prompts = v["n_toxic"] + v["n_nontoxic"] + v["n_challenging"]
    samples = prompts * v["k"]
    return ChapterWork(gen_tokens=(samples + prompts) * v["max_new_tokens"], scored_texts=samples + prompts)


def _detox(v: dict) -> ChapterWork:
    groups = v["n_toxic"] + v["n_nontoxic"] + v["n_unprompted"]
    sampled = 6 * groups * v["k"]  # base, word filter, vocabulary shift, DAPT toxic and non-toxic, ATCON
    pplm_samples = (2 * v["pplm_prompts"] + 1) * v["pplm_k"]
    corpus_texts = sum(v[k] or 8000 for k in ("vocab_shift_texts", "discriminator_texts"))
    return ChapterWork(gen_tokens=(sampled + pplm_samples) * v["max_new_tokens"],
                pplm_tokens=pplm_samples * v["max_new_tokens"],
                read_tokens=(7 * v["n_perplexity"] + v["pplm_perplexity"]) * TYPICAL["continuation_tokens"]
                + corpus_texts * TYPICAL["continuation_tokens"],
                train_tokens=3 * v["adapt_steps"] * 8 * TYPICAL["document_tokens"],
                scored_texts=sampled + 2 * pplm_samples)


def _sass(v: dict) -> ChapterWork:
    prompts = (v["lm_comments"] or ALL["sass_comments"]) * len(v["settings"])
    sampled = "sampled" in v["readings"]
    return ChapterWork(read_tokens=prompts * TYPICAL["sass_prompt_tokens"] * (1 + sampled),
                gen_tokens=prompts * 3 * TYPICAL["sass_answer_tokens"] if sampled else 0.0)


def _debias(v: dict) -> ChapterWork:
    runs = 2 * v["n_prompts"] * PROTOCOL_RUNS * (1 + len(v["sweep"]))
    return ChapterWork(sd_tokens=runs * v["max_new_tokens"] * v["num_beams"],
                gen_tokens=2 * v["n_prompts"] * PROTOCOL_RUNS * v["max_new_tokens"],
                scored_texts=runs + 2 * v["n_prompts"] * PROTOCOL_RUNS)


def _safety(v: dict) -> ChapterWork:
    toxigen = v["max_sentences"] or ALL["toxigen"]
    implicit = v["max_implicit_sentences"] or (v["max_sentences"] or ALL["implicit"])
    return ChapterWork(read_tokens=(toxigen + implicit + v["fidelity_sentences"]) * TYPICAL["sentence_tokens"])


WORK = {"rtp_unprompted": _unprompted, "rtp_prompted": _prompted, "rtp_detox": _detox, "sass": _sass,
        "debias_consistency": _debias, "safety_score": _safety}


def chapter_work(stem: str, values: dict) -> ChapterWork:
    """The work chapter ``stem`` asks of its one model at parameter ``values`` (every parameter, as
    ``toxlib.chapters`` gives them)."""
    return WORK[stem](values)
