"""Where a chapter run writes its notebook while it runs, and the removal of what a killed run left there.

A run writes ``.<stem>.<pid>.<random>.running.json`` beside its output and renames it over the output when it has
finished, so an interrupted run leaves the output as it was. A run that was killed (SIGKILL, a machine that went
down) cannot remove its partial file; ``new_partial(output)`` removes every partial file of the same output whose
process is no longer alive before it creates its own, so leftovers never pile up, and a run going on in another
process at the same moment keeps its file.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

SUFFIX = ".running.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def stale_partials(output: Path) -> list[Path]:
    """The partial files of ``output`` (see the module docstring) whose writing process is gone; a name without a
    process id (an older toxlib's) counts as gone."""
    pattern = re.compile(rf"^\.{re.escape(output.stem)}\.(?:(\d+)\.)?[^/]*{re.escape(SUFFIX)}$")
    found = []
    for path in output.parent.glob(f".{output.stem}.*{SUFFIX}"):
        match = pattern.match(path.name)
        if match and (match.group(1) is None or not _alive(int(match.group(1)))):
            found.append(path)
    return sorted(found)


def new_partial(output: Path) -> Path:
    """Remove ``output``'s stale partial files, then create (empty) and return this process's own."""
    for path in stale_partials(output):
        path.unlink(missing_ok=True)
    fd, partial = tempfile.mkstemp(dir=output.parent, prefix=f".{output.stem}.{os.getpid()}.", suffix=SUFFIX)
    os.close(fd)
    return Path(partial)
