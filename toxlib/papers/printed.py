"""What a paper printed, with where it printed it: the one format for the papers' values that claims compare with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Printed:
    """A value as the paper prints it (a number, or the paper's own wording when it gives no number) and
    ``source``, the table, figure or section it comes from (e.g. "Table 3", "§4.2")."""

    value: Any
    source: str

    def __str__(self) -> str:
        return str(self.value)
