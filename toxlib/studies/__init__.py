"""Chapter-only studies: analyses the book runs that belong to no single paper and that the engine does not need
(the speed measurements are in ``toxlib.benchmarks``).

  ``datasets``           data cards and dataset statistics, claims of the datasets chapter
  ``generation``         nucleus diagnostics per decoding step, claims of the generation chapter
  ``scorer_comparison``  agreement of each scorer with Perspective and humans, claims of the scorers chapter
  ``scorer_fidelity``    the distilled scorer before and after calibration: reliability diagram, agreement table
  ``captions``           the captions each study chapter gives its tables and figures, as templates

May import: common, store, data, metrics, models, generate, steer, scorers, report, papers.
"""
