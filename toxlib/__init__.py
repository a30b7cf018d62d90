"""toxlib: the shared library of the toxicity-papers companion book.

Where things live (each package's docstring says what it may import; ``tests/test_import_graph.py`` holds them to it):
  the engine    toxlib.data        data registry, fetch (URL or mirror) and typed loaders
                toxlib.models      language models by name, their perplexity, batching helpers, CPU kernel settings
                toxlib.generate    batched, cached generation with exact nucleus sampling; NLL under a steering
                toxlib.steer       detoxification methods: prompts, logits processors, DAPT/ATCON adaptation
                toxlib.scorers     toxicity scorers behind one protocol, and the local Perspective endpoint (serve)
                toxlib.executors   where heavy stages run: this process or a Ray cluster
  the science   toxlib.metrics     classification, agreement, toxicity metrics, intervals and verdicts
                toxlib.papers      one folder per paper: printed values, analysis, claims, prose, captions
                toxlib.studies     chapter-only studies: datasets, generation diagnostics, scorer comparison
  around them   toxlib.store       where and under which keys things are kept: caches and memos
                toxlib.publish     what a chapter shows and writes: tables, figures, claims, the scorecard
                toxlib.common      errors and progress bars
                toxlib.chapters    each chapter's parameters, profiles and checks, declared once
  tooling       toxlib.book_build  the book build: papermill runner, kernels, chapter runs (the [book] extra)
                toxlib.record_tools the sample record's tools: write, status, audit
                toxlib.benchmarks  speed measurements
                toxlib.cli         the command line (python -m toxlib ...): parses, calls the library, prints
"""

__version__ = "0.1.0"

# Every import of toxlib installs the artefact cache as the keeper of toxlib.common.memo, so that whether the
# metrics keep their bootstrap bounds does not depend on which module a caller imported first.
import toxlib.store  # noqa: E402, F401
