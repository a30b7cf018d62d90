"""toxlib: the shared library of the toxicity-papers companion book.

Where things live:
  toxlib.data      data registry, fetch (URL or mirror) and typed loaders
  toxlib.metrics   classification metrics and conditional rates
  toxlib.sass      the SASS paper's tables, built from loaded frames
  toxlib.describe  data cards and the dataset statistics the papers report
  toxlib.results   where notebooks write tables, figures and claims
  toxlib.runner    papermill execution of one notebook with checked parameters
  toxlib.book      executes the notebooks in _toc.yml and builds the Jupyter Book
"""

__version__ = "0.1.0"
