"""toxlib: the shared library of the toxicity-papers companion book.

Where things live:
  toxlib.data      data registry, fetch (URL or mirror) and typed loaders
  toxlib.models    language models by name (bundled, local directory, hub id), architecture facts
  toxlib.generate  batched, cached generation with exact nucleus sampling (generate, DecodingConfig)
  toxlib.steer     the steering hook: prompt transformations and logits processors
  toxlib.store.cache     append-only SQLite stores (generations)
  toxlib.models.perplexity  sentence log-likelihood and perplexity
  toxlib.metrics   classification metrics and conditional rates
  toxlib.papers    one home per paper (rtp, rtp_detox, sass, prompt_classifier, debias, safety): printed values,
                   analysis and the claims each chapter checks
  toxlib.studies   chapter-only studies: datasets, generation diagnostics and benchmark, scorer comparison
  toxlib.report.results   where notebooks write tables, figures and claims
  toxlib.build.runner    papermill execution of one notebook with checked parameters
  toxlib.build.book      executes the notebooks in _toc.yml and builds the Jupyter Book
"""

__version__ = "0.1.0"

from toxlib import progress as _progress  # noqa: E402,F401  (in a kernel: quiet libraries before they load)
