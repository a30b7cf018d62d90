"""The captions of the study chapters' tables and figures, one module per chapter (``datasets``, ``generation``,
``scorers``), each a ``toxlib.publish.captions.Captions`` named ``CAPTIONS``, filled with the run's values in the
chapter.
May import: report, data, studies (a study's constants).
"""
