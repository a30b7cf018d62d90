"""How toxlib keeps things on disk: where (``paths``), under which keys (``keys.stable_hash``), the append-only
SQLite caches of generations, scores and NLLs (``cache``), the sample record read in front of them
(``record_reader``; what a build used of it: ``record_usage``), and the one cache of every other computed thing
(``artefacts``: trained files, timings, bootstrap bounds, file digests), whose ``recorded_json`` is the keeper of
``toxlib.common.memo``
(installed by ``import toxlib``, so that no import order decides whether a memo is kept).
May import: common.
"""

from toxlib.common import memo
from toxlib.store.artefacts import recorded_json

memo.keep_with(recorded_json)
