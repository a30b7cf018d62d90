"""What a report card needs of a chapter whose claims concern a language model, declared with the chapter's
parameters (``Chapter.report``): the report iterates over the chapters that declare it and holds no list of its own.

    report=ReportNeeds(paper="SASS", model_parameter="models", work=sass_work, applies=sass_applies)

- ``paper``: the paper whose claims the chapter tests, as the report page names it.
- ``model_parameter``: the parameter that carries the model; ``model_list``: whether it is a list (``[model]``) or
  one model.
- ``masked``: how a masked LM enters, as {parameter: value} with "{model}" standing for the model (e.g.
  ``{"models": ["smollm2-135m"], "masked_models": ["{model}"]}``); None: a masked LM cannot run the chapter.
- ``scored``: whether its claims rest on toxicity scores of the model's own text (the scorer's domain matters).
- ``work``: values -> ``ChapterWork``, the computing it asks of the one model at those parameter values.
- ``applies``: facts -> ``Fit`` (applies, why, changes), when the chapter cannot apply to a model or must change a
  parameter for it; ``facts`` has the attributes of ``toxlib.reportcard.model_facts.ModelFacts`` (kind,
  start_token, answers_single). None: it applies to every model a masked/causal check lets through.
- ``figures``: {name: "module:function"}, the report's figures drawn from this chapter's tables: each function takes
  (the book's results folder, the report's, the model's name) and returns (figure, alternative text) or None; the
  report saves it as ``figures/<name>.png``. ``book_tables``: the tables of the book's run those figures read
  beside the report's (``<stem>/<table>.csv``), which the wheel carries (pyproject.toml's ``wheel-companion``,
  checked by a test).

Declarations stay light (no torch): ``ChapterWork`` lives here, the facts arrive as an object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields


@dataclass
class ChapterWork:
    """The computing a chapter asks of one model, in the units a model's rates are measured in: sampled or greedy
    tokens generated (``gen_tokens``), Self-Debiasing tokens (each runs the prompt and its six prefixed copies:
    ``sd_tokens`` count one token per row), tokens read without generating (sentence NLLs, next-token readings,
    prefills: ``read_tokens``), PPLM tokens (each with its gradient steps: ``pplm_tokens``), training tokens
    (continued pretraining: ``train_tokens``) and texts scored (``scored_texts``)."""

    gen_tokens: float = 0.0
    sd_tokens: float = 0.0
    read_tokens: float = 0.0
    pplm_tokens: float = 0.0
    train_tokens: float = 0.0
    scored_texts: float = 0.0

    def total(self) -> float:
        """Every unit summed, whatever its kind (what a share of the work is a share of)."""
        return float(sum(getattr(self, f.name) for f in fields(self)))

    def scaled(self, factor: float) -> ChapterWork:
        """Each unit times ``factor`` (the share of the work left to compute)."""
        return ChapterWork(**{f.name: getattr(self, f.name) * factor for f in fields(self)})


#: average lengths where a chapter's work depends on its data, from the sample record: tokens of a
#: ToxiGen/ImplicitHate sentence, of an RTP held-out continuation (perplexity), of a SASS prompt (few-shot longest)
#: and of a sampled answer (it stops at its first newline), of an adaptation document
TYPICAL = {"sentence_tokens": 22, "continuation_tokens": 20, "sass_prompt_tokens": 60, "sass_answer_tokens": 4,
           "document_tokens": 64}


@dataclass(frozen=True)
class Fit:
    """Whether a chapter applies to a model (``applies``), why not or what it changes (``why``, said to the reader),
    and the parameters it changes for it (``changes``)."""

    applies: bool
    why: str = ""
    changes: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class ReportNeeds:
    """See the module docstring."""

    paper: str
    model_parameter: str
    work: Callable[[dict], ChapterWork]
    model_list: bool = True
    scored: bool = False
    masked: Mapping | None = None
    applies: Callable[[object], Fit] | None = None
    figures: Mapping[str, str] = field(default_factory=dict)
    book_tables: tuple[str, ...] = ()

    def model_values(self, model: str, kind: str = "causal") -> dict:
        """The parameter values that make the chapter run ``model`` (of ``kind``, "causal" or "masked") alone.
        ValueError for a masked LM when the chapter declares no way in (check ``fit`` first)."""
        if kind == "masked":
            if self.masked is None:
                raise ValueError("a masked LM cannot run this chapter (its declaration has no masked entry)")
            return {k: _with_model(v, model) for k, v in self.masked.items()}
        return {self.model_parameter: [model] if self.model_list else model}

    def fit(self, facts) -> Fit:
        """Whether the chapter applies to the model of ``facts`` (kind, start_token, answers_single)."""
        if facts.kind == "masked" and self.masked is None:
            return Fit(False, "a masked LM does not generate text: this chapter reads what a causal model writes "
                              "(the safety score reads a masked LM by pseudo-perplexity)")
        return self.applies(facts) if self.applies else Fit(True)


def _with_model(value, model: str):
    """``value`` with "{model}" replaced by ``model`` (in a list's items too)."""
    if isinstance(value, list):
        return [model if v == "{model}" else v for v in value]
    return model if value == "{model}" else value
