"""What every package shares: toxlib's exceptions (``errors``) and progress bars that suit a terminal and a
notebook, with the quieting of other libraries' output (``progress``), which commit computed a row
(``provenance``), command-line argument types (``argtypes``), a file's sha256 (``digest``), and the keeper of
values worth keeping between runs (``memo``; the store installs its artefact cache there).
May import: nothing of toxlib.
"""
