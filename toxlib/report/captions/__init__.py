"""Captions as templates: a chapter's table and figure captions are written once, beside the paper or study code
that computes what they describe, and filled with the run's values where the chapter shows a table, so a notebook
cell carries a name (``caption("table2")``) instead of a paragraph of f-string.

    CAPTIONS = Captions("rtp_prompted", {"table2": "Table 2 analogue ... k = {k}, {scorer} scorer."},
                        constants={"printed": 327})
    caption = CAPTIONS.bind(k=25, scorer="distilled")     # once, after the parameters cell
    caption("table2")                                      # -> "Table 2 analogue ... k = 25, distilled scorer."
    caption("challenging", n=len(challenging))             # values computed in the chapter, by keyword

Templates use ``str.format`` fields (``{name}``, ``{value:.3f}``). A list or tuple value is written as its items
joined by ", " (a chapter's ``models``). Python's ``string.Formatter`` does the filling; this module adds only the
checks a reader of a broken chapter needs: an unknown caption name or a field without a value is an error that
names the template and the values it was given.

The templates live beside the code a chapter's numbers come from: ``toxlib.papers.captions.<chapter>`` for the
paper chapters, ``toxlib.studies.captions.<chapter>`` for the studies, ``toxlib.report.captions.scorecard`` for
the scorecard.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

_FORMATTER = string.Formatter()


def fields(template: str) -> set[str]:
    """The names of the fields ``template`` fills (``{k}`` and ``{value:.3f}`` give ``k`` and ``value``)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in _FORMATTER.parse(template) if name}


def _shown(value):
    """A value as a caption writes it: a list or tuple as its items joined by ", ", anything else as it is (so a
    format spec such as ``:.3f`` still applies to a number)."""
    return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Captions:
    """The captions of chapter ``stem``: ``templates`` maps a caption's name (the table's or figure's name where it
    has one) to its ``str.format`` template; ``constants`` are values every template may use that do not depend on
    the run (a paper's printed figure, a source's name)."""

    stem: str
    templates: dict[str, str]
    constants: dict = field(default_factory=dict)

    def __post_init__(self):
        for name, template in self.templates.items():
            try:
                fields(template)
            except ValueError as err:
                raise ValueError(f"caption {name!r} of {self.stem!r} is not a valid template ({err}); "
                                 "write a literal brace as {{ or }}") from err

    def bind(self, **values) -> BoundCaptions:
        """The captions with the run's parameters filled in wherever a template names them."""
        return BoundCaptions(self, {**self.constants, **values})


@dataclass(frozen=True)
class BoundCaptions:
    """``Captions`` with a run's values; calling it with a caption's name (and any values the chapter computed)
    returns the caption's text."""

    captions: Captions
    values: dict

    def __call__(self, name: str, **values) -> str:
        stem, templates = self.captions.stem, self.captions.templates
        if name not in templates:
            raise KeyError(f"chapter {stem!r} has no caption {name!r}; its captions: {sorted(templates)}")
        given = {**self.values, **values}
        missing = fields(templates[name]) - set(given)
        if missing:
            raise ValueError(f"caption {name!r} of {stem!r} needs {sorted(missing)}; pass them to bind() or to the "
                             f"call (given: {sorted(given)})")
        return _FORMATTER.vformat(templates[name], (), {key: _shown(value) for key, value in given.items()})
