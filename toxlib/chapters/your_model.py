"""The "Your model" page's parameters (``book/your_model.ipynb``), declared once."""

from toxlib.chapters.spec import MODEL, Chapter, Check, Parameter, measure_parameter, one_of


def _model_chapters(value) -> bool:
    from toxlib.chapters import model_chapters  # cycle: the package imports this module; asked at check time

    return isinstance(value, list) and all(c in model_chapters() for c in value)

CHAPTER = Chapter(
    'your_model',
    'Your model: a report card',
    intro=("Parameters (papermill). The page shows a report of a bundled model, whose rows the sample record holds; "
           "any model is one parameter away, as on the command line."),
    parameters=(
        Parameter('model', "smollm2-135m", MODEL,
                  'the model the shown report is of: a bundled name, a local folder or a hub id'),
        Parameter('budget', "decide", one_of("smoke", "quick", "decide", "paper"),
                  "the report's budget (decide: the book's sizes, read from the sample record for a bundled model)"),
        Parameter('chapters', [], Check("a list of the chapters whose claims concern a model (empty: all of them)",
                                        _model_chapters),
                  'the chapters the shown report runs (empty: every chapter whose claims concern a model)'),
        measure_parameter("the rates and budgets"),
    ),
    profiles={'paper': {}, 'quick': {'budget': 'quick'},
              'smoke': {'budget': 'smoke', 'chapters': ['safety_score']}},
    aggregate=True,  # its rows sit beside the book's claims: it runs after the chapters that write them
    compute="toxlib.reportcard.chapter:compute",
    order=10,
    part='Using this book',
    page='book/your_model.ipynb',
    sources=('rtp_sample',),  # the domain check's prompts and human continuations (toxlib.reportcard.domain)
)
