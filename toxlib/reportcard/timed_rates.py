"""Rates a report timed on this machine, kept for the next report of the same model: a report cut short and run again
(or run again with other chapters) prints its estimate at once instead of timing the model a second time.

``timed_before(identity, device)`` gives the ``Rates`` an earlier report timed for the model ``identity`` (its
``card.model_identity``: a bundled name or hub id, or a folder with the digest of its weights) on ``device``, or
None; ``keep_rates`` keeps them. They are kept in ``<TOXLIB_CACHE_DIR>/report-rates.json``, under a key that holds
everything the timing depends on besides the machine's load: the model, the device, torch's thread count and
version, toxlib's version and commit, the CPU (``describe_cpu``) and the number of timed runs. Only timings that
succeeded are kept; a file that cannot be read or written is as if empty, and costs the report nothing but the
timing. Delete the file to time again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time

import torch

import toxlib
from toxlib.common.provenance import library_commit
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.reportcard.estimate import REPEATS, Rates
from toxlib.store import paths
from toxlib.store.keys import stable_hash

RATES_FILE = "report-rates.json"


def _key(identity: str, device: str) -> str:
    return stable_hash({"model": identity, "device": device, "threads": torch.get_num_threads(),
                        "torch": torch.__version__, "toxlib": [toxlib.__version__, library_commit()],
                        "cpu": describe_cpu(), "repeats": REPEATS})


def _kept() -> dict:
    try:
        kept = json.loads((paths.cache_dir() / RATES_FILE).read_text())
    except (OSError, ValueError):  # none yet, or damaged: time again
        return {}
    return kept if isinstance(kept, dict) else {}


def timed_before(identity: str, device: str) -> Rates | None:
    """The rates an earlier report timed for ``identity`` on ``device`` here, their ``how`` saying when; else None."""
    entry = _kept().get(_key(identity, device))
    try:
        rates = Rates(**entry["rates"])
        return dataclasses.replace(rates, how=f"{rates.how}; timed by an earlier report at {entry['at']}")
    except (TypeError, KeyError):  # not kept, or a damaged entry
        return None


def keep_rates(identity: str, device: str, rates: Rates) -> None:
    """Keep ``rates`` (timed now) for the next report of ``identity`` on ``device``."""
    kept = _kept()
    kept[_key(identity, device)] = {"rates": dataclasses.asdict(rates),
                                    "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with contextlib.suppress(OSError), paths.written_atomically(paths.cache_dir() / RATES_FILE) as partial:
        partial.write_text(json.dumps(kept, indent=1))
