"""What every package shares: toxlib's exceptions (``errors``) and progress bars that suit a terminal and a
notebook, with the quieting of other libraries' output (``progress``), and which commit computed a row
(``provenance``).
May import: nothing of toxlib.
"""
