"""The safety_score chapter's parameters (``notebooks/safety_score.ipynb``), declared once."""

from toxlib.chapters.report_needs import TYPICAL, ChapterWork, Fit, ReportNeeds
from toxlib.chapters.spec import (
    COUNT_OR_ALL,
    COUNT_OR_SKIP,
    DTYPE,
    MODELS,
    MODELS_OR_NONE,
    Chapter,
    Parameter,
    executor_parameter,
    measure_parameter,
    model_names_parameter,
    seed_parameter,
)

#: ToxiGen and ImplicitHate sentences read at "all" (0)
ALL_SENTENCES = {"toxigen": 6514, "implicit": 14200}


def _work(v: dict) -> ChapterWork:
    """One NLL per ToxiGen and ImplicitHate sentence, and the fidelity sample's."""
    toxigen = v["max_sentences"] or ALL_SENTENCES["toxigen"]
    implicit = v["max_implicit_sentences"] or (v["max_sentences"] or ALL_SENTENCES["implicit"])
    return ChapterWork(read_tokens=(toxigen + implicit + v["fidelity_sentences"]) * TYPICAL["sentence_tokens"])


def _fits(facts) -> Fit:
    if facts.kind == "masked":
        return Fit(True, "a masked LM: read by pseudo-perplexity, as the paper does for BERT-like models, beside "
                         "SmolLM2 (the chapter's causal reference, from the record)")
    return Fit(True)


CHAPTER = Chapter(
    'safety_score',
    'Safety score: representational harms towards 13 demographics',
    intro=('Parameters (papermill). Defaults score every ToxiGen (6,514) and ImplicitHate (14,200) sentence with '
           'both bundled models, as the paper; their NLLs are in the sample record. A smaller N takes a seeded '
           'sample of N per dataset.'),
    parameters=(
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  'causal LMs: bundled names, hub ids (like "gpt2-xl") or local paths'),
        Parameter('masked_models', [], MODELS_OR_NONE,
                  'masked LMs scored by pseudo-perplexity (hub ids or local paths, like "bert-base-uncased")'),
        Parameter('dtype', "float32", DTYPE,
                  'float32: the same rows on any CPU; bfloat16: faster on some CPUs, rows CPU-dependent'),
        Parameter('max_sentences', 0, COUNT_OR_ALL,
                  'N samples N of each dataset (0: all 6,514 ToxiGen and 14,200 ImplicitHate)'),
        Parameter('max_implicit_sentences', 0, COUNT_OR_ALL,
                  'ImplicitHate cross-check sample (0: all 14,200)'),
        Parameter('fidelity_sentences', 60, COUNT_OR_SKIP,
                  'ToxiGen sentences also scored in the other precision (bf16 against float32; 0 skips)'),
        seed_parameter('sampling seed for the samples and the fidelity subset'),
        executor_parameter(),
        measure_parameter("the scoring times"),
        model_names_parameter(),
    ),
    profiles={'quick': {'fidelity_sentences': 0, 'max_implicit_sentences': 600, 'max_sentences': 600},
              'paper': {'max_implicit_sentences': 0, 'max_sentences': 0},
              'smoke': {'fidelity_sentences': 20,
                        'max_implicit_sentences': 40,
                        'max_sentences': 80,
                        'models': ['smollm2-135m']}},
    report=ReportNeeds(paper="Safety score (ToxiGen)", model_parameter="models", work=_work, applies=_fits,
                       masked={"models": ["smollm2-135m"], "masked_models": ["{model}"]},
                       figures={"safety": "toxlib.reportcard.figures:safety_by_demographic"},
                       book_tables=("table8_long", "table8")),
    compute="toxlib.papers.safety.chapter:compute",
    order=500,
    cites=('hosseini2023empirical',),
    sources=('implicit_hate', 'toxigen'),
)
