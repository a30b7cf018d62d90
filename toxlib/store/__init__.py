"""How toxlib keeps things on disk: where (``paths``), under which keys (``keys.stable_hash``), the append-only
SQLite caches of generations, scores and NLLs (``cache``) and the memo of bootstrap intervals (``interval_memo``).
May import: common.
"""
