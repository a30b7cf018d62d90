"""The debias_consistency chapter's parameters (``notebooks/debias_consistency.ipynb``), declared once."""

from toxlib.chapters.report_needs import ChapterWork, ReportNeeds
from toxlib.chapters.spec import (
    COUNT,
    COUNT_OR_SKIP,
    DTYPE,
    MODELS,
    POSITIVE,
    POSITIVE_LIST,
    PROBABILITY,
    SCORER,
    Chapter,
    Parameter,
    executor_parameter,
    model_names_parameter,
    seed_parameter,
)

#: runs of the consistency protocol per prompt set and method: default, original, opposite, nonsensical (5 groups),
#: blank
PROTOCOL_RUNS = 9


def _work(v: dict) -> ChapterWork:
    """The protocol's runs per prompt for Self-Debiasing (beam search, each step on seven rows) and Instructive
    Debiasing, with the sweep, each continuation scored."""
    runs = 2 * v["n_prompts"] * PROTOCOL_RUNS * (1 + len(v["sweep"]))
    return ChapterWork(sd_tokens=runs * v["max_new_tokens"] * v["num_beams"],
                       gen_tokens=2 * v["n_prompts"] * PROTOCOL_RUNS * v["max_new_tokens"],
                       scored_texts=runs + 2 * v["n_prompts"] * PROTOCOL_RUNS)


CHAPTER = Chapter(
    'debias_consistency',
    'Debiasing should be good and bad: the consistency protocol',
    intro=('Parameters (papermill). Paper-scale run: n_prompts 1199 (every prompt of both sets), num_beams 3 (the '
           "Self-Debiasing reference's beam search), sweep [10, 50] (Tables 8-11 with λ 100), and scorer "
           '"perspective" with an API key.'),
    parameters=(
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  'bundled names, local directories or hub ids'),
        Parameter('dtype', "float32", DTYPE,
                  'float32: the same rows on any CPU; bfloat16: faster on some CPUs, rows CPU-dependent'),
        Parameter('n_prompts', 300, COUNT,
                  "prompts drawn from each of the paper's sets (1,199 each; rows in the sample record)"),
        Parameter('decay_constant', 100.0, POSITIVE,
                  "Self-Debiasing λ of the main table (the paper's Table 3: 100)"),
        Parameter('sweep', [], POSITIVE_LIST,
                  'further λ values for the sweep table (the paper: 10 and 50)'),
        Parameter('num_beams', 1, COUNT,
                  'Self-Debiasing decoding: 1 is greedy (the budget default); the reference uses 3 beams'),
        Parameter('max_new_tokens', 20, COUNT,
                  'both methods: 20 new tokens, as the paper'),
        Parameter('scorer', "distilled", SCORER,
                  'six-attribute scorer: "distilled" (offline) or "perspective" (needs PERSPECTIVE_API_KEY)'),
        Parameter('alpha', 0.05, PROBABILITY,
                  'significance level of the t-tests'),
        Parameter('n_examples', 2, COUNT_OR_SKIP,
                  "prompts shown with every condition's continuation"),
        seed_parameter('prompt sampling seed'),
        executor_parameter(),
        model_names_parameter(),
    ),
    profiles={'quick': {'n_examples': 1, 'n_prompts': 12},
              'paper': {'decay_constant': 100.0, 'n_prompts': 1199, 'num_beams': 3, 'sweep': [10.0, 50.0]},
              'smoke': {'max_new_tokens': 4, 'models': ['smollm2-135m'], 'n_examples': 1, 'n_prompts': 2}},
    report=ReportNeeds(paper="Debiasing should be Good and Bad", model_parameter="models", work=_work,
                       scored=True),
    compute="toxlib.papers.debias.chapter:compute",
    order=400,
    cites=('morabito2023debiasing',),
    sources=('debias_adversarial', 'debias_neutral', 'rtp_challenging', 'rtp_nontoxic', 'rtp_sample'),
)
