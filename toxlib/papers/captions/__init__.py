"""The captions of the paper chapters' tables and figures, one module per chapter (``rtp_prompted``,
``rtp_unprompted``, ``rtp_detox``, ``safety_score``, ``sass``, ``debias_consistency``), each a
``toxlib.report.captions.Captions`` named ``CAPTIONS``, filled with the run's values in the chapter.
May import: report, metrics, papers (a paper's printed values, source names and thresholds, as constants).
"""
