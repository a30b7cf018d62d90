"""The scorecard chapter's parameters (``book/scorecard.ipynb``), declared once."""

from toxlib.chapters.spec import FLAG, Chapter, Parameter

CHAPTER = Chapter(
    'scorecard',
    'Reproduction scorecard',
    intro='Parameters (papermill).',
    parameters=(
        Parameter('only_failures', False, FLAG,
                  'show only the claims that do not hold'),
    ),
    profiles={'paper': {}, 'smoke': {}},
    aggregate=True,
    compute="toxlib.studies.scorecard_chapter:compute",
    order=900,
    part='Summary',
    page='book/scorecard.ipynb',
)
