"""Captions of the "Your model" page (``book/your_model.ipynb``).

Fields the page binds from its parameters: ``model``, ``budget``, ``chapters``.
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("your_model", {
    "budgets": "Estimated minutes per chapter and budget for {model} on the machine that built this page (rates "
               "timed there; rows the sample record or a cache holds are not subtracted).",
    "report": "Every claim about {model} at the {budget} budget, beside the paper's value and the bundled models' "
              "values in this book (* : the verdict rests on toxicity scores of text outside the scorer's domain).",
})
