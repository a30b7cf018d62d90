"""How results are shown and kept: tables and figures written per chapter (``results``), claims with their
intervals and verdicts (``claims``), the scorecard and the findings box (``scorecard``), styled tables (``tables``)
with readers' headers (``headers``), figures (``plots``) as the book shows them (``figures``), several tables as
tabs (``tabs``), links between pages (``pages``), captions as templates (``captions``; the scorecard page's own in
``captions.scorecard``). Every text that came from a model or a data set is escaped in one place, ``escape``.
May import: store, metrics, chapters (the chapters' titles).
"""
