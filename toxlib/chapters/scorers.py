"""The scorers chapter's parameters (``notebooks/scorers.ipynb``), declared once."""

from toxlib.chapters.spec import (
    COUNT,
    COUNT_OR_NONE,
    COUNT_OR_SKIP,
    FLAG,
    SCORERS,
    Chapter,
    Parameter,
    executor_parameter,
    measure_parameter,
    seed_parameter,
)

CHAPTER = Chapter(
    'scorers',
    'Scoring toxicity offline',
    intro=('Parameters (papermill). Defaults: the shipped weights on all held-out texts (retrain: the reproduction'
           ' check).'),
    parameters=(
        Parameter('scorers', ["distilled", "bilstm", "profanity-svm"], SCORERS,
                  'local scorers compared with Perspective'),
        Parameter('retrain', False, FLAG,
                  'True: retrain with the shipped recipe (about 30 min here) and compare with the shipped weights'),
        Parameter('epochs', 6, COUNT,
                  'training passes over the training split (the shipped weights: 6)'),
        seed_parameter('split and training seed (the shipped weights: 0)'),
        Parameter('train_limit', None, COUNT_OR_NONE,
                  'train on only this many texts (None: all, about 11,600)'),
        Parameter('held_out_limit', None, COUNT_OR_NONE,
                  'evaluate on only this many held-out texts (None: all, about 2,900)'),
        Parameter('throughput_texts', 2000, COUNT_OR_SKIP,
                  'RTP texts per scorer in the throughput table'),
        measure_parameter("the throughput table"),
        executor_parameter(),
    ),
    profiles={'paper': {}, 'smoke': {'held_out_limit': 200, 'throughput_texts': 200, 'train_limit': 64}},
    compute="toxlib.studies.scorers_chapter:compute",
    order=310,
    cites=('piedras2022critical',),
    sources=('rtp_challenging', 'rtp_nontoxic', 'rtp_sample', 'sass_predictions'),
)
