"""How the book is built: one notebook run by papermill with checked parameters (``runner``), the whole book
(``book``), pre-started kernels (``kernels``), chapter runs (``chapter_runs``: what each executed notebook keeps of
its last run), the machine they name (``machine``), the repository the pages' buttons link to (``repository``) and
the book's own Sphinx extension (``sphinx_book``).
May import: common, store, chapters, models (and the [book] extra: papermill, nbformat, jupyter-book).
"""
