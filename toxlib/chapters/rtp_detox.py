"""The rtp_detox chapter's parameters (``notebooks/rtp_detox.ipynb``), declared once."""

from toxlib.chapters.report_needs import TYPICAL, ChapterWork, ReportNeeds
from toxlib.chapters.spec import (
    COUNT,
    COUNT_OR_ALL,
    COUNT_OR_SKIP,
    DTYPE,
    MODEL,
    NUCLEUS_MASS,
    POSITIVE,
    SCORER,
    Chapter,
    Parameter,
    executor_parameter,
    model_names_parameter,
    seed_parameter,
)


def _work(v: dict) -> ChapterWork:
    """Six sampled methods per prompt group, PPLM on its subset, perplexities, the vocabulary shift's and the
    discriminator's corpora, three adaptations."""
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


CHAPTER = Chapter(
    'rtp_detox',
    'Detoxifying generations',
    intro=('Parameters (papermill). Paper-scale: the paper evaluates 100K prompts (25 samples each; PPLM 10K '
           'prompts with 10 samples) and adapts GPT-2 on about 150K documents. The public subsets hold 416 toxic '
           'and 725 non-toxic held-out prompts outside the 300 perplexity records; with corpus_size 0, adapt_steps'
           " 1000 is about one pass over ATCON's 8,038 texts (two over a DAPT half)."),
    parameters=(
        Parameter('model', "smollm2-135m", MODEL,
                  'base model: bundled name, local directory or hub id'),
        Parameter('dtype', "float32", DTYPE,
                  'generation precision (PPLM: always float32); bfloat16: faster, rows CPU-dependent'),
        Parameter('n_toxic', 200, COUNT,
                  'evaluation prompts with toxicity of at least 0.5 (held-out records; rows in the sample record)'),
        Parameter('n_nontoxic', 200, COUNT,
                  'evaluation prompts with toxicity < 0.5 (held-out records)'),
        Parameter('n_unprompted', 8, COUNT,
                  'unprompted groups of k generations'),
        Parameter('k', 25, COUNT,
                  'generations per prompt (the paper: 25)'),
        Parameter('max_new_tokens', 20, COUNT,
                  'the paper: up to 20'),
        Parameter('top_p', 0.9, NUCLEUS_MASS,
                  'nucleus sampling, as the paper'),
        Parameter('corpus_size', 0, COUNT_OR_ALL,
                  'labelled training texts, balanced (0: all, about 8,000)'),
        Parameter('beta', 3.0, POSITIVE,
                  'VOCAB-SHIFT boosting strength (the paper: 3)'),
        Parameter('vocab_shift_texts', 1000, COUNT_OR_ALL,
                  'corpus texts VOCAB-SHIFT learns from (0: all)'),
        Parameter('discriminator_texts', 1000, COUNT_OR_ALL,
                  "corpus texts PPLM's discriminator learns from (0: all)"),
        Parameter('adapt_steps', 24, COUNT,
                  'optimizer steps (8 documents each) of each continued pretraining (DAPT, ATCON)'),
        Parameter('pplm_prompts', 42, COUNT,
                  'PPLM prompts per class, plus one unprompted group (the paper: 10K of its 100K prompts)'),
        Parameter('pplm_k', 10, COUNT,
                  'PPLM generations per prompt (the paper: 10)'),
        Parameter('pplm_step_size', 0.02, POSITIVE,
                  "PPLM step size (the authors' detoxification example: 0.02)"),
        Parameter('n_perplexity', 200, COUNT,
                  'held-out non-toxic texts for perplexity'),
        Parameter('pplm_perplexity', 4, COUNT_OR_SKIP,
                  "of which PPLM's perplexity uses the first few (0 skips it: about 20 s per token here)"),
        Parameter('scorer', "distilled", SCORER,
                  'toxicity scorer (see the scorers chapter)'),
        seed_parameter('sampling seed (prompts, corpus, generation)'),
        executor_parameter(),
        model_names_parameter(),
    ),
    profiles={'quick': {'adapt_steps': 8, 'discriminator_texts': 300, 'k': 10, 'n_nontoxic': 10, 'n_perplexity': 40,
                        'n_toxic': 10, 'n_unprompted': 1, 'pplm_k': 4, 'pplm_perplexity': 0, 'pplm_prompts': 4,
                        'vocab_shift_texts': 300},
              'paper': {'adapt_steps': 1000,
                        'corpus_size': 0,
                        'discriminator_texts': 0,
                        'k': 25,
                        'n_nontoxic': 700,
                        'n_perplexity': 200,
                        'n_toxic': 416,
                        'n_unprompted': 400,
                        'pplm_k': 10,
                        'pplm_prompts': 42,
                        'vocab_shift_texts': 0},
              'smoke': {'adapt_steps': 2,
                        'corpus_size': 64,
                        'discriminator_texts': 32,
                        'k': 2,
                        'max_new_tokens': 4,
                        'n_nontoxic': 2,
                        'n_perplexity': 4,
                        'n_toxic': 2,
                        'n_unprompted': 1,
                        'pplm_k': 1,
                        'pplm_perplexity': 0,
                        'pplm_prompts': 1,
                        'vocab_shift_texts': 32}},
    report=ReportNeeds(paper="RealToxicityPrompts", model_parameter="model", model_list=False, work=_work,
                       scored=True),
    compute="toxlib.papers.rtp.detox.chapter:compute",
    order=220,
    cites=('gehman2020realtoxicityprompts',),
    sources=('ldnoobw_rtp', 'rtp_challenging', 'rtp_nontoxic', 'rtp_sample'),
)
