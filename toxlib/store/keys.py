"""The one hashing rule of every cache key, memo and stored run: ``stable_hash`` of a JSON-serialisable value.

A key names what decides the rows (model weights, precision, decoding, steering, scorer and their versions), never
where the code that computes them lives: no module path, file path or class location enters a key, so moving code
changes no key (``tests/test_import_graph.py`` and the committed tables check it).
"""

from __future__ import annotations

import hashlib
import json


def stable_hash(obj) -> str:
    """sha256 hex of a JSON-serialisable object with sorted keys."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()
