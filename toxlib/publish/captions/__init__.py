"""Captions as templates: the captions a chapter gives its tables and figures are written once, beside the paper or
study code that computes what they describe, and filled with the run's values where the chapter shows a table, so a
notebook cell carries a name (``caption("table2")``) instead of a paragraph of f-string.

    CAPTIONS = Captions("rtp_prompted", {"table2": "Table 2 analogue ... k = {k}, {scorer} scorer.",
                                         "prompts": "... plus {n_challenging_drawn} challenging prompts."},
                        constants={"pool": rtp.PROMPT_POOL_DESCRIPTION})
    caption = CAPTIONS.bind(k=25, scorer="distilled")      # once, after the parameters cell
    caption("table2")                                       # -> "Table 2 analogue ... k = 25, distilled scorer."
    caption("prompts", n_challenging_drawn=len(challenging))  # a value the chapter computed, by keyword

Templates use named ``str.format`` fields (``{name}``, ``{value:.3f}``). A list or tuple value is written as its
items joined by ", " (a chapter's ``models``). Python's ``string.Formatter`` does the filling; this module adds only
the checks a reader of a broken chapter needs: an unknown caption name, a field without a value, or a value the
template does not use is an error that names the template and the values it was given.

The templates live beside the code a chapter's numbers come from: ``toxlib.papers.<paper>.captions`` for the
paper chapters (``rtp.captions`` holds two, ``rtp.detox.captions`` one), ``toxlib.studies.captions.<chapter>`` for
the studies, ``toxlib.publish.captions.scorecard`` for the scorecard page. A few library functions that show
several tables or figures at once write their own captions in their module
(``toxlib.papers.debias.findings.show_attribute_tables``, ``toxlib.studies.scorer_fidelity``'s ``publish_*``, the
scorecard's forest plots); a chapter passes them its bound caption's text where it adds to them.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

_FORMATTER = string.Formatter()


def template_fields(template: str) -> set[str]:
    """The names of the fields ``template`` fills (``"{k} {value:.3f}"`` gives ``{"k", "value"}``).
    Raises ValueError for a template ``str.format`` cannot parse, a positional field (``{}``, ``{0}``) or a field
    nested in a format spec (``{x:{width}}``): a caption names each value it shows."""
    names = set()
    for _, name, spec, _ in _FORMATTER.parse(template):
        if name is None:
            continue
        base = name.split(".")[0].split("[")[0]
        if not base or base.isdigit():
            raise ValueError(f"positional field {{{name}}}: name the value, as {{n_prompts}}")
        if spec and "{" in spec:
            raise ValueError(f"field {{{name}:{spec}}} nests a field in its format spec")
        names.add(base)
    return names


def _shown(value):
    """A value as a caption writes it: a list or tuple as its items joined by ", ", anything else as it is (so a
    format spec such as ``:.3f`` still applies to a number)."""
    return ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Captions:
    """The captions of chapter ``stem``: ``templates`` maps a caption's name (the table's name where the chapter
    publishes one, ``fig_<name>`` for a figure's title, ``note_<name>`` for a fragment another caption takes as a
    value) to its ``str.format`` template; ``constants`` are values any template may use that do not depend on the
    run (a paper's printed figure, a source's name). Invalid templates raise ValueError when the module loads."""

    stem: str
    templates: dict[str, str]
    constants: dict = field(default_factory=dict)

    def __post_init__(self):
        for name, template in self.templates.items():
            try:
                template_fields(template)
            except ValueError as err:
                raise ValueError(f"caption {name!r} of {self.stem!r} is not a valid template ({err}); "
                                 "write a literal brace as {{ or }}") from err

    def bind(self, **values) -> BoundCaptions:
        """The captions with the run's parameters captured now (their values at this call, unlike an f-string,
        which reads its values when the caption is built), beside ``constants``; a value bound here replaces a
        constant of the same name."""
        return BoundCaptions(self, {**self.constants, **values})


@dataclass(frozen=True)
class BoundCaptions:
    """``Captions`` with a run's values (``values``: name -> value)."""

    captions: Captions
    values: dict

    def __call__(self, name: str, **values) -> str:
        """The text of caption ``name``: its template filled from the bound values and ``values`` (computed in
        the chapter; they win over bound ones). Raises KeyError for an unknown ``name``, ValueError when a field
        has no value or when ``values`` holds a name the template does not use (a mistyped keyword)."""
        stem, templates = self.captions.stem, self.captions.templates
        if name not in templates:
            raise KeyError(f"chapter {stem!r} has no caption {name!r}; its captions: {sorted(templates)}")
        wanted = template_fields(templates[name])
        unused = set(values) - wanted
        if unused:
            raise ValueError(f"caption {name!r} of {stem!r} has no field {sorted(unused)}; its fields: "
                             f"{sorted(wanted)}")
        given = {**self.values, **values}
        missing = wanted - set(given)
        if missing:
            raise ValueError(f"caption {name!r} of {stem!r} needs {sorted(missing)}; pass them to bind() or to the "
                             f"call (given: {sorted(given)})")
        return _FORMATTER.vformat(templates[name], (), {key: _shown(value) for key, value in given.items()})
