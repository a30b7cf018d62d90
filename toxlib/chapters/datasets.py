"""The datasets chapter's parameters (``notebooks/datasets.ipynb``), declared once."""

from toxlib.chapters.spec import PROBABILITY, Chapter, Parameter, subset_of

CHAPTER = Chapter(
    'datasets',
    'Datasets: what the four papers measured on, and what we can reach',
    intro='Parameters (papermill). The defaults are the full analysis: the data files are small.',
    parameters=(
        Parameter('rtp_subsets', ["challenging", "nontoxic", "sample"], subset_of('challenging', 'nontoxic', 'sample'),
                  'RealToxicityPrompts subsets to describe'),
        Parameter('toxic_threshold', 0.5, PROBABILITY,
                  'a prompt is toxic when its Perspective toxicity is at least this, as in RealToxicityPrompts'),
    ),
    profiles={'paper': {}, 'smoke': {'rtp_subsets': ['nontoxic', 'sample']}},
    compute="toxlib.studies.datasets_chapter:compute",
    order=100,
    cites=('gehman2020realtoxicityprompts',),
    sources=("*",),  # its data cards count every data file of data/sources.yaml
)
