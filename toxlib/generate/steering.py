"""The steering hook of the generation engine: the base classes every steering method implements (the methods live
in ``toxlib.steer``, one module each). ``toxlib.steer`` re-exports these classes.

A steering method is a :class:`Steering`: it may rewrite each prompt before the model sees it (instructive
prefixes) and may add logits processors that see every decoding step (word filters, vocabulary shifts,
self-debiasing). Its ``config()`` goes into the generation cache key, so changing a steering setting never reuses
texts generated under another.

Logits processors use transformers' interface, ``processor(input_ids, scores) -> scores``, with input_ids
(rows, prompt + generated tokens, left padded) and scores (rows, vocab) float32 logits. Two optional methods let a
processor keep per-row state: ``start_batch(input_ids, attention_mask, rows_per_prompt)`` is called before the
first step of each batch, and ``select_rows(index)`` whenever finished rows leave the batch (index: the rows kept).
"""

from __future__ import annotations


class Steering:
    """No steering. Subclasses override ``transform_prompt``, ``logits_processors`` and ``config`` (required)."""

    name = "none"

    def transform_prompt(self, prompt: str) -> str:
        """The text the model is given for ``prompt`` (the output keeps the original prompt)."""
        return prompt

    def logits_processors(self, lm) -> list:
        """Processors applied, in order, to the logits of every step before the next token is chosen."""
        return []

    def batch_key(self, lm, prompt_ids: list[int]) -> tuple:
        """What else besides the padded prompt width a prompt (its token ids, after ``transform_prompt``) must share
        with the prompts of its batch: a tuple fixed by the prompt alone. A processor that pads its own inputs (Self-
        Debiasing's prefixed copies) returns their padded width, so that padding never depends on the batch."""
        return ()

    def config(self) -> dict:
        """Every setting that changes the texts (JSON-serialisable). Part of the generation cache key.

        Only "no steering" itself has nothing but its name: a subclass must say what it changes, so one that forgets
        to cannot share cached texts with another setting (a TypeError naming it instead)."""
        if type(self).config is Steering.config and type(self) is not Steering:
            raise TypeError(f"{type(self).__name__} must define config(): every setting that changes its texts "
                            "goes into the generation cache key")
        return {"name": self.name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config()})"


class PromptTemplate(Steering):
    """Rewrite every prompt with a template containing ``{prompt}``, e.g. "Be polite for: {prompt}"."""

    name = "prompt-template"

    def __init__(self, template: str):
        if "{prompt}" not in template:
            raise ValueError(f"template must contain '{{prompt}}', got {template!r}")
        self.template = template

    def transform_prompt(self, prompt: str) -> str:
        return self.template.replace("{prompt}", prompt)

    def config(self) -> dict:
        return {"name": self.name, "template": self.template}


class LogitsSteering(Steering):
    """Steering by a given list of logits processors. ``settings`` (JSON-serialisable) must describe everything
    about them that changes the texts: it goes into the cache key with ``name``."""

    def __init__(self, name: str, processors: list, settings: dict | None = None):
        self.name, self.processors, self.settings = name, list(processors), settings or {}

    def logits_processors(self, lm) -> list:
        return self.processors

    def config(self) -> dict:
        return {"name": self.name, **self.settings}
