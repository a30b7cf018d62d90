"""The sass chapter's parameters (``notebooks/sass.ipynb``), declared once."""

from toxlib.chapters.report_needs import TYPICAL, ChapterWork, Fit, ReportNeeds
from toxlib.chapters.spec import (
    COUNT_OR_NONE,
    MODELS,
    NUMBER,
    PROBABILITY,
    SCORERS,
    Chapter,
    Parameter,
    executor_parameter,
    model_names_parameter,
    subset_of,
)

#: SASS comments at lm_comments=None
ALL_COMMENTS = 250
#: the answers the next-token reading compares (``toxlib.papers.sass.prompt_classifier.ANSWERS``)
ANSWER_WORDS = "' True' and ' False'"


def _work(v: dict) -> ChapterWork:
    """Every comment asked in every setting: one next-token reading each, and three sampled answers each for the
    sampled reading."""
    prompts = (v["lm_comments"] or ALL_COMMENTS) * len(v["settings"])
    sampled = "sampled" in v["readings"]
    return ChapterWork(read_tokens=prompts * TYPICAL["sass_prompt_tokens"] * (1 + sampled),
                       gen_tokens=prompts * 3 * TYPICAL["sass_answer_tokens"] if sampled else 0.0)


def _fits(facts) -> Fit:
    if not facts.answers_single:
        return Fit(True, f"{ANSWER_WORDS} are not single tokens for this tokenizer, so the next-token reading cannot "
                         "apply: only the sampled reading (the paper's) is run", {"readings": ["sampled"]})
    return Fit(True)


CHAPTER = Chapter(
    'sass',
    'SASS: Perspective and GPT-3 against human judgements',
    intro=("Parameters (papermill). The defaults are the paper's settings. Part 2 (local models in the paper's place) "
           "reads models, settings, readings, scorers, scorer_threshold and lm_comments."),
    parameters=(
        Parameter('human_threshold', 0.5, NUMBER,
                  'a comment is toxic for humans when its z-normalised score is > this'),
        Parameter('perspective_threshold', 0.5, PROBABILITY,
                  'Perspective flags a comment when its toxicity is > this'),
        Parameter('swear_lists', ["rtp", "en"], subset_of('rtp', 'en'),
                  'LDNOOBW versions used to detect swear words: "rtp" (378 entries), "en" (403)'),
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  "LMs asked the paper's zero/one/few-shot prompts (bundled, dirs, hub ids)"),
        Parameter('settings', ["zero", "one", "few"], subset_of('zero', 'one', 'few'),
                  "prompt settings of the paper's Table 4"),
        Parameter('readings', ["next-token", "sampled"], subset_of('next-token', 'sampled'),
                  "how an answer is read: P(' True') vs P(' False'), or the mode of 3 samples"),
        Parameter('scorers', ["distilled", "bilstm", "profanity-svm"], SCORERS,
                  'local scorers, thresholded like Perspective'),
        Parameter('scorer_threshold', 0.5, PROBABILITY,
                  'a scorer flags a comment when its toxicity is > this'),
        Parameter('lm_comments', None, COUNT_OR_NONE,
                  'ask the LMs about only the first N SASS comments (None: all 250)'),
        Parameter('tweets_limit', None, COUNT_OR_NONE,
                  'Table 7 analogue on only the first N of the 1,000 tweets (None: all)'),
        executor_parameter(),
        model_names_parameter(),
    ),
    profiles={'quick': {'lm_comments': 60, 'readings': ['next-token'], 'tweets_limit': 100},
              'paper': {},
              'smoke': {'lm_comments': 30,
                        'models': ['smollm2-135m'],
                        'scorers': ['profanity-svm'],
                        'settings': ['few'],
                        'swear_lists': ['rtp'],
                        'tweets_limit': 40}},
    report=ReportNeeds(paper="SASS", model_parameter="models", work=_work, applies=_fits),
    compute="toxlib.papers.sass.chapter:compute",
    order=300,
    cites=('piedras2022critical',),
    sources=('ldnoobw_en', 'ldnoobw_rtp', 'sass_predictions', 'sass_tweeteval_responses'),
)
