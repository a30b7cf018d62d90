"""Captions of the "Your model" page (``book/your_model.ipynb``).

Fields the page binds from its parameters: ``model``, ``budget``, ``chapters``.
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("your_model", {
    "budgets": "Estimated minutes per chapter and budget for {model} on the machine named in the rows (rates timed "
               "there; the share of the work the sample record holds is not charged, rows a cache holds are).",
    "domains": "The scorer's domain check of the bundled models: the share of each model's continuations more "
               "surprising to SmolLM2 than 95% of RealToxicityPrompts' human continuations (nats per token), the "
               "medians, and whether the model's text lies outside the scorer's domain (more than half far).",
    "report": "Every claim about {model} at the {budget} budget, beside the paper's value and the bundled models' "
              "values in this book (* : the verdict rests on toxicity scores of text outside the scorer's domain).",
})
