"""What a chapter computes, as one object: its tables, figures, notes, claims and the numbers its prose quotes.

A chapter's compute function (named by its declaration, ``toxlib.chapters``) builds a ``ChapterResult`` and returns
it; nothing is written or displayed while it computes:

    out = ChapterResult("sass", values)
    out.add_table("table3", t3, caption("table3"), columns=[...])      # written as table3.csv, shown by name
    out.add_figure("table5_bars", lambda: plots.grouped_bars(...))     # drawn when written or shown
    out.add_text("sizes", "SASS: 250 comments ...")                    # a line the page prints
    out.add_claims(rows, caption("claims"))                            # claims.csv, the claims table, findings
    out.add_prose({"sass-floor": "..."})                               # numbers the chapter's text quotes
    return out

Then whoever asked uses it: a notebook ``publish``es it (every file under ``results_dir()/<stem>/``, every glue
key) and ``show``s its parts where its narrative wants them; the report card ``write``s it into a report's folder
without figures, and reads its claims. A part is one of:

- a table: ``file`` (written as ``<name>.csv``, or ``.csv.gz`` with ``compress``) and/or ``shown`` (displayed as
  ``toxlib.publish.tables.show`` renders it: caption, ``digits``, ``columns``, ``headers``, ``turn``, ``code``, a
  link to its CSV when it has a file);
- a figure: drawn by a function of no arguments (so a run that shows no figure draws none), saved as
  ``<name>.png``; ``numbered`` figures are glued for the chapter's ``{glue:figure}`` directives (key
  ``<stem>-fig-<name>``, its title as ``<key>-caption``), the others are shown in place under ``caption``;
- a text (printed where shown), an HTML block made when shown (a tab set, ``toxlib.publish.tabs.tab_set``), or
  anything else made when shown and displayed as it is (``add_display``: a Markdown block, a styled table);
- a skipped name (``skip``): what a parameter turned off, shown as the reason why, so a notebook shows the same
  parts at every parameter value without a conditional of its own.

Figures are kept apart from tables and texts: a chapter may have a table and a figure of one name (rtp_detox's
Table 3 and its bars). Files are written exactly as ``toxlib.publish.results`` writes them, so the same values give
the same bytes whoever publishes them. Written by hand: myst-nb's glue and papermill store outputs, not a
computation's parts by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from toxlib.publish.claims import checked_claims
from toxlib.publish.figures import FigureOutput
from toxlib.publish.glue import glue_all, glue_markdown
from toxlib.publish.results import csv_href, figure_key, figure_title, save_figure, write_table
from toxlib.publish.scorecard import findings_html, show_claims
from toxlib.publish.tables import show
from toxlib.store import paths


@dataclass
class TablePart:
    """A table of a chapter: see the module docstring (``file``: written; ``shown``: displayed)."""

    name: str
    frame: pd.DataFrame
    caption: str = ""
    columns: list | None = None
    digits: int = 3
    headers: dict | None = None
    turn: str | None = None
    code: tuple = ()
    compress: bool = False
    file: bool = True
    shown: bool = True


@dataclass
class FigurePart:
    """A figure of a chapter: ``draw()`` makes the matplotlib figure; ``numbered``: glued for a numbered figure in
    the chapter's text, else shown in place under ``caption`` (default: its title)."""

    name: str
    draw: Callable
    numbered: bool = True
    caption: str | None = None


@dataclass
class TextPart:
    name: str
    text: str


@dataclass
class HtmlPart:
    """A block of HTML made by ``make()`` when it is shown (a tab set of tables)."""

    name: str
    make: Callable[[], str]

    def _repr_html_(self) -> str:
        return self.make()


@dataclass
class DisplayPart:
    """Something made by ``make()`` when shown and displayed as it is (a Markdown block, a styled claims table);
    with ``many``, ``make()`` gives several, displayed in order."""

    name: str
    make: Callable
    many: bool = False


@dataclass
class ChapterResult:
    """Everything chapter ``stem`` computed at parameter ``values``; see the module docstring."""

    stem: str
    values: dict = field(default_factory=dict)
    parts: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    claims: pd.DataFrame | None = None
    claims_caption: str = ""
    prose: dict = field(default_factory=dict)
    prose_markdown: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)  # the data files it read (toxlib.chapters.compute notes them)
    drawn: dict = field(default_factory=dict, repr=False)  # figures shown in place, drawn once

    # building -------------------------------------------------------------------------------------------------

    def _add(self, part) -> None:
        if part.name in self.parts:
            raise ValueError(f"chapter {self.stem}: a part named {part.name!r} was added twice")
        self.parts[part.name] = part

    def add_table(self, name: str, frame: pd.DataFrame, caption: str = "", **options) -> pd.DataFrame:
        """Add table ``name`` (options: those of ``TablePart``); returns ``frame``, so a compute function can go on
        with it."""
        if options.get("shown", True) and not caption:
            raise ValueError(f"chapter {self.stem}: shown table {name!r} needs a caption")
        self._add(TablePart(name, frame, caption, **options))
        return frame

    def add_figure(self, name: str, draw: Callable, numbered: bool = True, caption: str | None = None) -> None:
        """Add figure ``name``, drawn by ``draw()`` when it is written or shown."""
        if name in self.figures:
            raise ValueError(f"chapter {self.stem}: a figure named {name!r} was added twice")
        self.figures[name] = FigurePart(name, draw, numbered, caption)

    def add_text(self, name: str, text: str) -> None:
        self._add(TextPart(name, text))

    def add_display(self, name: str, make: Callable, many: bool = False) -> None:
        """Add a part displayed as ``make()`` gives it (each of them with ``many``) when shown."""
        self._add(DisplayPart(name, make, many))

    def add_figure_group(self, name: str, figures: list[str]) -> None:
        """Add a part that shows the in-place ``figures`` (added with ``numbered=False``) one after another."""
        self._add(DisplayPart(name, lambda: [self._in_place(figure) for figure in figures], many=True))

    def add_html(self, name: str, make: Callable[[], str]) -> None:
        """Add an HTML block made by ``make()`` when shown (its parts escaped where they were made)."""
        self._add(HtmlPart(name, make))

    def skip(self, name: str, why: str = "") -> None:
        """Say that part or figure ``name`` was not computed in this run (a parameter turned it off, or no run timed
        it): showing it prints ``why`` (nothing when empty) instead of failing as an unknown name would."""
        self.skipped[name] = why

    def add_claims(self, rows: list[dict], caption: str) -> pd.DataFrame:
        """The chapter's claims (rows of ``toxlib.publish.claims.claim``, checked as ``write_claims`` checks them);
        returns them as the typed frame claims.csv holds."""
        self.claims, self.claims_caption = checked_claims(self.stem, rows), caption
        return self.claims

    def add_prose(self, values: dict[str, str], markdown: bool = False) -> None:
        """Numbers the chapter's text quotes ({glue key: text}, for ``{glue:text}`` roles); with ``markdown``,
        blocks of MyST markdown for ``{glue:md}`` directives."""
        (self.prose_markdown if markdown else self.prose).update(values)

    # using ----------------------------------------------------------------------------------------------------

    def table(self, name: str) -> pd.DataFrame:
        """The frame of table ``name`` (KeyError naming the tables there are)."""
        part = self.parts.get(name)
        if not isinstance(part, TablePart):
            raise KeyError(f"chapter {self.stem} has no table {name!r}; its tables: "
                           f"{', '.join(n for n, p in self.parts.items() if isinstance(p, TablePart))}")
        return part.frame

    def files(self) -> list[str]:
        """The file names ``write`` writes, figures included, in order."""
        names = [f"{p.name}.csv{'.gz' if p.compress else ''}" for p in self.parts.values()
                 if isinstance(p, TablePart) and p.file]
        names += [f"{name}.png" for name in self.figures]
        return names + (["claims.csv"] if self.claims is not None else [])

    def write(self, root: str | Path | None = None, figures: bool = True) -> Path:
        """Write every table with a file, every figure (unless ``figures`` is False) and claims.csv under
        ``<root>/<stem>/`` (``root`` default: ``paths.results_dir()``); returns that folder."""
        root = Path(root) if root is not None else paths.results_dir()
        for part in self.parts.values():
            if isinstance(part, TablePart) and part.file:
                write_table(self.stem, part.name, part.frame, compress=part.compress, root=root)
        if figures:
            import matplotlib.pyplot as plt  # optional: matplotlib comes with the [book] and [report] extras

            for part in self.figures.values():
                plt.close(self._saved(part, root))
        if self.claims is not None:
            write_table(self.stem, "claims", self.claims, root=root)
        return root / self.stem

    def _saved(self, part: FigurePart, root: Path):
        """Figure ``part`` drawn and saved under ``root``; the open matplotlib figure (the caller closes it)."""
        fig = part.draw()
        save_figure(self.stem, part.name, fig, root=root)
        return fig

    def publish(self) -> None:
        """What a notebook does with its result in its first cell: ``write`` every file under ``results_dir()``
        and glue the numbered figures, the findings (``<stem>-findings``) and the prose for the chapter's
        ``{glue:...}`` roles. Needs the [book] extra (myst-nb)."""
        import matplotlib.pyplot as plt  # optional: the [book] extra
        from myst_nb import glue  # optional: the [book] extra

        root = paths.results_dir()
        self.write(root, figures=False)
        for part in self.figures.values():
            fig = self._saved(part, root)
            if part.numbered:
                title = figure_title(fig)
                if not title:
                    raise ValueError(f"figure {part.name!r} of {self.stem!r} has no title to caption it with: set "
                                     "one with ax.set_title")
                glue(figure_key(self.stem, part.name), FigureOutput(fig), display=False)
                glue(f"{figure_key(self.stem, part.name)}-caption", title, display=False)
            else:
                self.drawn[part.name] = FigureOutput(fig, part.caption if part.caption is not None
                                                      else figure_title(fig) or "")
            plt.close(fig)
        if self.claims is not None:
            glue_markdown(f"{self.stem}-findings", findings_html(self.claims, self.stem))
        glue_all(self.prose)
        for key, text in self.prose_markdown.items():
            glue_markdown(key, text)

    def shown(self, name: str):
        """What ``show(name)`` displays: a ``toxlib.publish.tables.Table``, an HTML block, a text, or a figure shown
        in place (a ``FigureOutput``)."""

        if name == "claims" and self.claims is not None:
            return show_claims(self.claims, self.claims_caption, csv=csv_href(self.stem, "claims"), stem=self.stem)
        if name in self.parts:
            part = self.parts[name]
            if isinstance(part, TablePart):
                frame = part.frame if part.columns is None else part.frame[part.columns]
                href = csv_href(self.stem, part.name, part.compress) if part.file else None
                return show(frame, part.caption, part.digits, csv=href, headers=part.headers, turn=part.turn,
                            code=part.code)
            return part
        if name in self.figures and not self.figures[name].numbered:
            return self._in_place(name)
        if name in self.skipped:
            return TextPart(name, self.skipped[name])
        shown = [*self.parts, *(n for n, f in self.figures.items() if not f.numbered), *self.skipped]
        raise KeyError(f"chapter {self.stem} has no part {name!r} to show; its parts: {', '.join(shown)}"
                       + (", claims" if self.claims is not None else ""))

    def _in_place(self, name: str):

        if name not in self.drawn:
            import matplotlib.pyplot as plt  # optional: the [book] extra

            part = self.figures[name]
            fig = part.draw()
            self.drawn[name] = FigureOutput(fig, part.caption if part.caption is not None
                                            else figure_title(fig) or "")
            plt.close(fig)
        return self.drawn[name]

    def show_figure(self, *names: str) -> None:
        """Display the figures ``names`` in place (figures added with ``numbered=False``; a skipped one prints why)."""
        from IPython.display import display  # optional: IPython comes with the [book] extra

        for name in names:
            if name in self.figures and not self.figures[name].numbered:
                display(self._in_place(name))
            elif name in self.skipped:
                if self.skipped[name]:
                    print(self.skipped[name])
            else:
                raise KeyError(f"chapter {self.stem} has no figure {name!r} to show in place; its figures: "
                               f"{', '.join(n for n, f in self.figures.items() if not f.numbered)}")

    def show(self, *names: str) -> None:
        """Display parts ``names`` in order (a text is printed, an empty one not); KeyError naming the parts for an
        unknown name."""
        from IPython.display import display  # optional: IPython comes with the [book] extra

        for name in names:
            part = self.shown(name)
            if isinstance(part, TextPart):
                if part.text:  # an empty text shows nothing
                    print(part.text)
            elif isinstance(part, DisplayPart):
                for shown in (part.make() if part.many else [part.make()]):
                    display(shown)
            else:
                display(part)
