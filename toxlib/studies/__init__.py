"""Chapter-only studies: analyses the book runs that belong to no single paper and that the engine does not need
(the speed measurements are in ``toxlib.benchmarks``).

  ``datasets``             data cards and dataset statistics, claims of the datasets chapter
  ``nucleus_steps``        nucleus sizes per decoding step against transformers' top-p (a recorded table)
  ``nucleus_diagnostics``  their summary and the claims of the generation chapter (its speed tables are
                           ``toxlib.benchmarks.generation_speed``'s)
  ``scorer_comparison``    agreement of each scorer with Perspective and humans, claims of the scorers chapter
  ``scorer_fidelity``      the distilled scorer before and after calibration: reliability diagram, agreement table
  ``captions``             the captions each study chapter gives its tables and figures, as templates

The papers' values the studies' claims compare with are their papers' (``toxlib.papers.<paper>.printed``'s
``PAPER``, with the section or table each comes from), never typed here.

May import: store, data, metrics, models, generate, steer, scorers, publish, papers, benchmarks (the committed
timings a claim rests on; models for a device's cache key).
"""
