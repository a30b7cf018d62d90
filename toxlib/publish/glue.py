"""Numbers that chapter prose quotes, pasted from the computation: ``glue_all({key: text})`` in a (hidden) code cell,
``{glue:text}`key``` in the chapter's markdown, so an exercise solution or a caption states what this run computed,
on any CPU and with any parameters, instead of digits typed once. myst-nb's ``glue`` does the pasting; this module
only glues many values at once without displaying them.
"""

from __future__ import annotations


def glue_all(values: dict[str, str]) -> None:
    """Glue each ``values`` item under its key (text/plain, not displayed) for ``{glue:text}`` roles in the notebook's
    markdown. Needs the [book] extra (myst-nb), which executing a chapter needs anyway."""
    from myst_nb import glue  # optional: the [book] extra

    for key, text in values.items():
        glue(key, text, display=False)


def glue_markdown(key: str, text: str) -> None:
    """Glue ``text`` as MyST markdown under ``key``, for a ``{glue:md}`` directive (``:format: myst``): a block such
    as a chapter's findings, pasted where the page wants it (above the computation that made it)."""
    from IPython.display import Markdown  # optional: IPython comes with the [book] extra
    from myst_nb import glue  # optional: the [book] extra

    glue(key, Markdown(text), display=False)
