"""Look inside nucleus sampling on a real model: the size of the nucleus at every decoding step, and whether it is
the set transformers' top-p keeps.

``record_nucleus(lm, prompts, config)`` generates with a pass-through logits processor (``NucleusRecorder``) that
measures, at every step and row, the size of the nucleus and whether toxlib's kept set equals transformers'
``TopPLogitsWarper`` set on the same logits. It changes no text. Its table is a recorded artefact
(``toxlib.store.artefacts.artefact_frame``): the sample record holds the default build's, so a default build reads
them instead of decoding again; any other run computes its table once and keeps it in the user's cache.
``STEPS_VERSION`` is keyed into that table: bump it when a change here can change a row.
"""

from __future__ import annotations

import pandas as pd
import torch
from transformers import TopPLogitsWarper

from toxlib.generate.api import generate
from toxlib.generate.config import DecodingConfig, run_key
from toxlib.generate.nucleus import fast_nucleus_mask
from toxlib.models.device import kernel_key
from toxlib.steer import LogitsSteering
from toxlib.store.artefacts import artefact_frame, artefact_name
from toxlib.store.keys import stable_hash

#: the recorder's revision, keyed into its tables (guarded by tests/test_version_guards.py)
STEPS_VERSION = 1


class NucleusRecorder:
    """Logits processor that records (step, nucleus size, same set as transformers) and returns scores unchanged."""

    def __init__(self, top_p: float):
        self.top_p, self.rows = top_p, []
        self.reference = TopPLogitsWarper(top_p)

    def start_batch(self, input_ids, attention_mask, rows_per_prompt):
        self.prompt_width = input_ids.shape[1]

    def __call__(self, input_ids, scores):
        ours = fast_nucleus_mask(scores, self.top_p)
        theirs = self.reference(input_ids, scores.clone()) > -float("inf")
        step = input_ids.shape[1] - self.prompt_width
        sizes, same = ours.sum(-1).tolist(), (ours == theirs).all(-1).tolist()
        self.rows.extend((step, s, e) for s, e in zip(sizes, same))
        return scores


def record_nucleus(lm, prompts, config: DecodingConfig, batch_rows: int | None = None,
                   progress: bool = True, cache: bool = True) -> pd.DataFrame:
    """Nucleus statistics of a sampling run: one row per (generated row, step) with columns model, step,
    nucleus_size (tokens kept), same_as_transformers (bool). On a CPU the run is deterministic (seeded, batch
    invariant), so with ``cache`` the table is computed once per model, weights, dtype, config, prompts and device
    class (a GPU's rows are kept apart, as its generations are: ``toxlib.models.device.kernel_key``), or read from
    the sample record when it holds it (``artefact_frame``, ``recorded=True``; the record holds a CPU's)."""

    def compute() -> pd.DataFrame:
        recorder = NucleusRecorder(config.top_p)
        with torch.inference_mode():
            generate(lm, prompts, config, steering=LogitsSteering("record-nucleus", [recorder]), cache=False,
                     batch_rows=batch_rows, progress=progress)
        out = pd.DataFrame(recorder.rows, columns=["step", "nucleus_size", "same_as_transformers"])
        out.insert(0, "model", lm.name)
        return out

    if not cache:
        return compute()
    key = {**run_key(lm.name, lm.weights_id, str(lm.dtype), config,
                     {"name": "record-nucleus", "version": STEPS_VERSION}, kernel_key(lm.device)),
           "prompts": stable_hash(list(prompts))}
    return artefact_frame(artefact_name("frames", "nucleus", key, ".csv.gz"), compute, recorded=True)
