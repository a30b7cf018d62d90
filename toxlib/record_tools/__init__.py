"""The sample record's tools: ``write`` keeps the rows a build used in ``data/record/`` with their provenance,
``status`` says what it holds, ``audit`` recomputes a seeded slice of it from scratch and compares. Reading the
record is the caches' job (``toxlib.store.record_reader``).
May import: common, store, book_build, models, generate, steer, scorers, papers (the audit re-runs a chapter's own
computation where no lower package holds it: SASS's next-token reading).
"""
