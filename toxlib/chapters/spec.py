"""A chapter's parameters declared once: their defaults, what each may be (its check), its help text, and the
chapter's profiles (named parameter sets: smoke, quick, paper; "default" is the defaults).

    CHAPTER = Chapter("rtp_prompted", "Prompted toxicity (RealToxicityPrompts §4, Table 2)",
                      intro="Parameters (papermill). ...",
                      parameters=(Parameter("k", 25, COUNT, "generations per prompt (the paper: 25)"), ...),
                      profiles={"smoke": {"k": 5}, "paper": {...}})
    CHAPTER.values("smoke", {"k": "3"})     # -> every parameter, the profile's and given values parsed and checked
    CHAPTER.cell_source()                   # the notebook's parameters cell, as papermill reads it

A value given as text (the command line's ``-p k 3``) is parsed to the type of the parameter's default with
``ast.literal_eval``; an int is accepted where a float is expected. Every parameter has a ``Check`` (what it
allows, in words, and a test): a value it refuses raises ``ParameterError`` naming the chapter, the parameter, the
value and what is allowed, before a notebook starts.

Written by hand because papermill reads a parameters cell's names and defaults but checks neither types nor
meanings, and no library reads a notebook's parameters from a typed declaration.
"""

from __future__ import annotations

import ast
import math
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from toxlib.common.errors import ParameterError, UnknownNameError

_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}
PROFILES = ("default", "smoke", "quick", "paper")
#: the parts of the book's table of contents, in order (``toxlib.book_build.toc``)
PARTS = ("Using this book", "Chapters", "Summary")


@dataclass(frozen=True)
class Check:
    """What a parameter may be: ``allows`` in words ("a whole number of at least 1") and ``test`` (value -> bool)."""

    allows: str
    test: Callable[[object], bool] = field(compare=False)

    def __call__(self, value) -> bool:
        try:
            return bool(self.test(value))
        except (TypeError, ValueError):
            return False


def _is_int(value, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_name(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _known_scorer(name) -> bool:
    from toxlib.scorers import known_scorers  # heavy: the registry imports torch; declarations stay light

    return isinstance(name, str) and (name in known_scorers() or name.startswith("hf:") and len(name) > 3)


COUNT = Check("a whole number of at least 1", lambda v: _is_int(v, 1))
COUNT_OR_ALL = Check("a whole number of at least 1, or 0 for all", lambda v: _is_int(v, 0))
COUNT_OR_NONE = Check("a whole number of at least 1, or None for all", lambda v: v is None or _is_int(v, 1))
COUNT_OR_SKIP = Check("a whole number of at least 1, or 0 to skip it", lambda v: _is_int(v, 0))
SEED = Check("a whole number of at least 0", lambda v: _is_int(v, 0))
PROBABILITY = Check("a number from 0 to 1", lambda v: _is_number(v) and 0 <= v <= 1)
NUCLEUS_MASS = Check("a number above 0 and at most 1", lambda v: _is_number(v) and 0 < v <= 1)
POSITIVE = Check("a finite number above 0", lambda v: _is_number(v) and v > 0)
NUMBER = Check("a finite number", _is_number)
FLAG = Check("true or false", lambda v: isinstance(v, bool))
POSITIVE_LIST = Check("a list of finite numbers above 0 (may be empty)",
                      lambda v: isinstance(v, list) and all(_is_number(x) and x > 0 for x in v))
MODEL = Check("a model: a bundled name, a local directory or a hub id", _is_name)
MODELS = Check("a list of at least one model (bundled name, local directory or hub id)",
               lambda v: isinstance(v, list) and bool(v) and all(_is_name(m) for m in v))
MODELS_OR_NONE = Check("a list of models (hub ids or local directories; may be empty)",
                       lambda v: isinstance(v, list) and all(_is_name(m) for m in v))
MODEL_NAMES = Check('short names for your own models, such as {"mine": "/path/to/folder"} ({} for none)',
                    lambda v: isinstance(v, dict) and all(_is_name(k) and _is_name(t) for k, t in v.items()))
SCORER = Check("a known scorer name (python -m toxlib score --help lists them) or hf:<id or dir>", _known_scorer)
SCORERS = Check("a list of at least one known scorer name",
                lambda v: isinstance(v, list) and bool(v) and all(_known_scorer(s) for s in v))


def one_of(*choices) -> Check:
    """A value equal to one of ``choices``."""
    return Check("one of " + ", ".join(map(repr, choices)), lambda v: v in choices)


def subset_of(*choices) -> Check:
    """A non-empty list of ``choices`` (each at most once)."""
    return Check("a non-empty list of " + ", ".join(map(repr, choices)),
                 lambda v: isinstance(v, list) and bool(v) and len(set(v)) == len(v) and all(x in choices for x in v))


def model_names_parameter() -> Parameter:
    """What every chapter that loads models declares: short names for a reader's own models, handed to
    ``toxlib.models.name_models`` in the chapter's first code cell, so tables and claims show the name, not a path."""
    return Parameter("model_names", {}, MODEL_NAMES, "short names for your own models: {name: folder or hub id}")


def measure_parameter(tables: str) -> Parameter:
    """What every chapter that shows machine timings declares: time the machine it runs on (True) or show the committed
    benchmark runs' timings of ``tables`` (False, the default: a default build measures nothing,
    ``toxlib.benchmarks.chapter_timings``)."""
    return Parameter("measure", False, FLAG, f"time your machine for {tables} (False: show the committed runs')")


DTYPE = one_of("float32", "bfloat16")
EXECUTOR = one_of("local", "ray")


def executor_parameter() -> Parameter:
    """What every chapter that generates or scores declares: where those stages run (``toxlib.executors``)."""
    return Parameter("executor", "local", EXECUTOR,
                     'where generation and scoring run: "local", or "ray" (see "Running at paper scale")')


def seed_parameter(help: str = "sampling seed") -> Parameter:
    """A chapter's seed: a whole number from 0, default 0; ``help`` says what it seeds."""
    return Parameter("seed", 0, SEED, help)


@dataclass(frozen=True)
class Parameter:
    """One parameter: its ``name``, ``default`` (the default profile's value, also the type a text is parsed to),
    ``check`` and ``help`` (one line, shown in the parameters cell after the value)."""

    name: str
    default: object
    check: Check
    help: str

    def __post_init__(self):
        if not self.check(self.default):
            raise ValueError(f"parameter {self.name!r}: its default {self.default!r} is not {self.check.allows}")
        if "=" in self.help or "\n" in self.help:
            raise ValueError(f"parameter {self.name!r}: its help must be one line without '=' (papermill reads "
                             "the parameters cell line by line and gives up on a second '=')")

    def parse(self, value, chapter: str = ""):
        """``value`` (a Python value, or a text to parse to the default's type) checked: ParameterError naming the
        parameter, the value and what is allowed when it is refused."""
        where = f" of {chapter}" if chapter else ""
        parsed = _parse(value, self.default) if isinstance(value, str) and not isinstance(self.default, str) \
            else value
        if isinstance(self.default, float) and _is_int(parsed, -2**63):
            parsed = float(parsed)
        if not self.check(parsed):
            raise ParameterError(f"parameter {self.name!r}{where} is {value!r}: it must be {self.check.allows}")
        return parsed


def _parse(text: str, default):
    """A command-line text as a Python value of the default's kind: true/false for a bool, a literal otherwise
    (a bare word stays text where no literal reads)."""
    stripped = text.strip()
    if isinstance(default, bool):
        if stripped.lower() in _TRUE | _FALSE:
            return stripped.lower() in _TRUE
        return text
    try:
        return ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


@dataclass(frozen=True)
class Chapter:
    """A chapter's declaration: ``stem`` (the notebook's file name without .ipynb), ``title``, ``intro`` (the
    comment lines opening its parameters cell, without "# "), ``parameters`` and ``profiles`` ({profile name:
    {parameter: value}}, each value checked when the module loads). ``aggregate``: the chapter gathers the others'
    results (the scorecard) and re-runs whenever any does. ``report``: what a report card needs of a chapter whose
    claims concern a language model (``toxlib.chapters.report_needs.ReportNeeds``); None for the others.
    ``compute``: "module:function" naming the function that computes the chapter (``values, models`` ->
    ``toxlib.publish.chapter_result.ChapterResult``), imported only when the chapter is computed, so a declaration
    stays light (no torch at import).

    Where the chapter sits in the book, and what it stands on (the registry, ``toxlib.chapters``, orders the
    chapters by ``order``; the table of contents, the scorecard, the report card and the checks of the sources and
    citations read these): ``part``, the part of the table of contents ("Using this book", "Chapters", "Summary");
    ``page``, the notebook's path from the checkout's root (default ``notebooks/<stem>.ipynb``); ``cites``, the
    BibTeX keys (``references.bib``) of the papers it reproduces; ``sources``, the names of the data files
    (``data/sources.yaml``) it reads ("*": every one)."""

    stem: str
    title: str
    intro: str
    parameters: tuple[Parameter, ...]
    profiles: Mapping[str, Mapping] = field(default_factory=dict)
    aggregate: bool = False
    report: object = None  # a ReportNeeds (report_needs.py imports nothing from here; kept untyped to stay light)
    compute: str = ""
    order: float = 1000.0
    part: str = "Chapters"
    page: str = ""
    cites: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.page:
            object.__setattr__(self, "page", f"notebooks/{self.stem}.ipynb")
        if self.part not in PARTS:
            raise ValueError(f"{self.stem}: part {self.part!r} is not a part of the book; parts: {', '.join(PARTS)}")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.stem}: a parameter is declared twice in {names}")
        unknown = sorted(set(self.profiles) - set(PROFILES) | ({"default"} & set(self.profiles)))
        if unknown:
            raise ValueError(f"{self.stem}: profile(s) {unknown} are not declarable; profiles are "
                             f"{', '.join(PROFILES[1:])} (default is the parameters' defaults)")
        object.__setattr__(self, "profiles", MappingProxyType({k: MappingProxyType(dict(v))
                                                               for k, v in self.profiles.items()}))
        for profile in self.profiles:
            try:
                self.values(profile)
            except (ParameterError, UnknownNameError) as exc:  # at import, naming the profile
                raise ValueError(f"profile {profile!r} of {self.stem}: {exc}") from None

    @property
    def by_name(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.parameters}

    def profile(self, name: str) -> dict:
        """The values profile ``name`` sets (``{}`` for default). UnknownNameError for a name toxlib does not know;
        ParameterError when this chapter does not declare it."""
        if name not in PROFILES:
            raise UnknownNameError(f"unknown profile {name!r}; profiles are {', '.join(PROFILES)}")
        if name == "default":
            return {}
        if name not in self.profiles:
            raise ParameterError(f"{self.stem} declares no {name!r} profile (its profiles: "
                                 f"{', '.join(['default', *self.profiles])}); declare it in "
                                 f"toxlib/chapters/{self.stem}.py")
        return dict(self.profiles[name])

    def values(self, profile: str = "default", given: Mapping | None = None) -> dict:
        """Every parameter's value for ``profile`` with ``given`` (name -> value or text) over it, parsed and
        checked. UnknownNameError lists the valid names for a name that is not a parameter."""
        wanted = {**self.profile(profile), **dict(given or {})}
        unknown = sorted(set(wanted) - set(self.by_name))
        if unknown:
            listing = "; ".join(f"{p.name} (default {p.default!r}: {p.check.allows})" for p in self.parameters)
            raise UnknownNameError(f"unknown parameter(s) {', '.join(unknown)} for {self.stem}; valid parameters: "
                                   f"{listing}")
        out = self.defaults()
        out.update({name: self.by_name[name].parse(value, self.stem) for name, value in wanted.items()})
        return out

    def chosen(self, profile: str = "default", given: Mapping | None = None) -> dict:
        """The values ``profile`` and ``given`` set (parsed and checked), without the defaults they leave alone:
        what a run passes to papermill, and what its run record lists."""
        every = self.values(profile, given)
        return {name: every[name] for name in {**self.profile(profile), **dict(given or {})}}

    def current(self, namespace: Mapping) -> dict:
        """The parameters' values as a running notebook holds them (``globals()``), checked: a chapter calls this
        after its parameters cell, so a value set by hand in the notebook is checked as ``run`` checks it."""
        return self.values("default", {p.name: namespace[p.name] for p in self.parameters if p.name in namespace})

    def cell_source(self) -> str:
        """The notebook's parameters cell: the intro as comment lines of at most 120 characters, then one line per
        parameter (``name = default  # help``)."""
        intro = "".join(f"# {line}\n" for line in textwrap.wrap(self.intro, 118))
        return intro + "\n".join(f"{p.name} = {p.default!r}  # {p.help}" for p in self.parameters)
