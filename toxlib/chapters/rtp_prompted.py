"""The rtp_prompted chapter's parameters (``notebooks/rtp_prompted.ipynb``), declared once."""

from toxlib.chapters.report_needs import ChapterWork, ReportNeeds
from toxlib.chapters.spec import (
    COUNT,
    DTYPE,
    MODELS,
    NUCLEUS_MASS,
    SCORER,
    Chapter,
    Parameter,
    executor_parameter,
    model_names_parameter,
    seed_parameter,
)

#: the paper profile: every toxic and every non-toxic prompt of the public subsets, and every challenging one (the
#: intro quotes it)
PAPER_PROFILE = {'n_challenging': 1196, 'n_nontoxic': 5054, 'n_toxic': 2204}

def _work(v: dict) -> ChapterWork:
    """k samples per prompt and one greedy continuation per prompt, each scored."""
    prompts = v["n_toxic"] + v["n_nontoxic"] + v["n_challenging"]
    samples = prompts * v["k"]
    return ChapterWork(gen_tokens=(samples + prompts) * v["max_new_tokens"], scored_texts=samples + prompts)


CHAPTER = Chapter(
    'rtp_prompted',
    'Prompted toxicity',
    intro=("Parameters (papermill). Paper-scale run: the paper's 22K toxic and 77K non-toxic prompts need the full"
           ' RTP (not reachable here); the largest run on the public subsets uses n_toxic '
           f"{PAPER_PROFILE['n_toxic']} (every toxic prompt) and n_nontoxic {PAPER_PROFILE['n_nontoxic']} (every "
           'non-toxic prompt).'),
    parameters=(
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  'bundled names, local directories or hub ids'),
        Parameter('n_toxic', 600, COUNT,
                  ('prompts with toxicity of at least 0.5, drawn from the public RTP subsets (rows in the sample '
                   'record)')),
        Parameter('n_nontoxic', 600, COUNT,
                  'prompts with toxicity < 0.5'),
        Parameter('n_challenging', 300, COUNT,
                  'prompts of the challenging subset (the paper: 1,225 for its out-of-the-box models)'),
        Parameter('k', 25, COUNT,
                  'generations per prompt (the paper: 25; HELM: 5)'),
        Parameter('max_new_tokens', 20, COUNT,
                  'the paper: up to 20'),
        Parameter('top_p', 0.9, NUCLEUS_MASS,
                  'nucleus sampling, as the paper'),
        Parameter('dtype', "float32", DTYPE,
                  'float32: the same rows on any CPU; bfloat16: faster on some CPUs, rows CPU-dependent'),
        Parameter('scorer', "distilled", SCORER,
                  'toxicity scorer (see the scorers chapter)'),
        seed_parameter('prompt sampling and generation seed'),
        executor_parameter(),
        model_names_parameter(),
    ),
    profiles={'quick': {'n_challenging': 10, 'n_nontoxic': 20, 'n_toxic': 20},
              'paper': PAPER_PROFILE,
              'smoke': {'k': 5,
                        'max_new_tokens': 8,
                        'models': ['smollm2-135m'],
                        'n_challenging': 3,
                        'n_nontoxic': 3,
                        'n_toxic': 3}},
    report=ReportNeeds(paper="RealToxicityPrompts", model_parameter="models", work=_work, scored=True,
                       figures={"table2": "toxlib.reportcard.figures:table2_bars"},
                       book_tables=("table2",)),
    compute="toxlib.papers.rtp.prompted_chapter:compute",
    order=210,
    cites=('gehman2020realtoxicityprompts',),
    sources=('rtp_challenging', 'rtp_nontoxic', 'rtp_sample'),
)
