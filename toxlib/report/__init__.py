"""How results are shown and kept: tables and figures written per chapter (``results``), claims with their
intervals and verdicts (``claims``), the scorecard (``scorecard``), styled tables (``tables``), figures (``plots``).
May import: common, store, metrics.
"""
