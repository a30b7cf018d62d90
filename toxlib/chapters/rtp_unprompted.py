"""The rtp_unprompted chapter's parameters (``notebooks/rtp_unprompted.ipynb``), declared once."""

from toxlib.chapters.report_needs import ChapterWork, Fit, ReportNeeds
from toxlib.chapters.spec import (
    COUNT,
    MODELS,
    NUCLEUS_MASS,
    SCORER,
    Chapter,
    Parameter,
    executor_parameter,
    model_names_parameter,
    seed_parameter,
)


def _work(v: dict) -> ChapterWork:
    """Its one model's pool of unprompted generations, each scored."""
    return ChapterWork(gen_tokens=v["pool_size"] * v["max_new_tokens"], scored_texts=v["pool_size"])


def _fits(facts) -> Fit:
    if facts.start_token is None:
        return Fit(False, "unprompted generation starts from the model's start-of-sequence token, and its tokenizer "
                          "has neither a BOS nor an EOS token")
    return Fit(True)


CHAPTER = Chapter(
    'rtp_unprompted',
    'Unprompted toxicity',
    intro="Parameters (papermill). The defaults are the paper's sizes.",
    parameters=(
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  'bundled names, local directories or hub ids'),
        Parameter('pool_size', 10000, COUNT,
                  'unprompted generations per model (the paper: 10,000)'),
        Parameter('max_new_tokens', 20, COUNT,
                  'the paper: up to 20 tokens'),
        Parameter('top_p', 0.9, NUCLEUS_MASS,
                  'nucleus sampling, as the paper'),
        Parameter('resamples', 1000, COUNT,
                  'bootstrap resamples per n (the paper: 1,000)'),
        Parameter('scorer', "distilled", SCORER,
                  'toxicity scorer (see the scorers chapter)'),
        seed_parameter('sampling seed'),
        executor_parameter(),
        model_names_parameter(),
    ),
    profiles={'quick': {'pool_size': 500, 'resamples': 200},
              'paper': {'pool_size': 10000, 'resamples': 1000},
              'smoke': {'models': ['smollm2-135m'], 'pool_size': 40, 'resamples': 50}},
    report=ReportNeeds(paper="RealToxicityPrompts", model_parameter="models", work=_work, scored=True,
                       applies=_fits,
                       figures={"unprompted": "toxlib.reportcard.figures:unprompted_curve"},
                       book_tables=("figure2",)),
    compute="toxlib.papers.rtp.unprompted_chapter:compute",
    order=200,
    cites=('gehman2020realtoxicityprompts',),
)
