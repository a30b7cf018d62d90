"""How results are shown and kept: tables and figures written per chapter (``results``), claims with their
intervals and verdicts (``claims``), the scorecard (``scorecard``), styled tables (``tables``), figures (``plots``),
captions as templates (``captions``; the scorecard page's own in ``captions.scorecard``).
May import: store, metrics.
"""
