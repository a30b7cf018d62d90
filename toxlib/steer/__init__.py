"""Steering: ways to change what a model writes, plugged into ``toxlib.generate.generate(..., steering=...)``.

A steering method is a :class:`Steering`: it may rewrite each prompt before the model sees it (instructive
prefixes) and may add logits processors that see every decoding step (word filters, vocabulary shifts,
self-debiasing). Its ``config()`` goes into the generation cache key, so changing a steering setting never reuses
texts generated under another. Concrete methods live in this package, one module each; the base classes live with
the engine that calls them (``toxlib.generate.steering``) and are re-exported here.

Logits processors use transformers' interface, ``processor(input_ids, scores) -> scores``, with input_ids
(rows, prompt + generated tokens, left padded) and scores (rows, vocab) float32 logits. Two optional methods let a
processor keep per-row state: ``start_batch(input_ids, attention_mask, rows_per_prompt)`` is called before the
first step of each batch, and ``select_rows(index)`` whenever finished rows leave the batch (index: the rows kept).

May import: common, store, data, models, generate.
"""

from toxlib.generate.steering import LogitsSteering, PromptTemplate, Steering

__all__ = ["LogitsSteering", "PromptTemplate", "Steering"]
