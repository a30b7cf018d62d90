"""A killed chapter run's partial notebook is removed by the next run of the same output; a live run's is kept."""

from __future__ import annotations

import os
import subprocess
import sys

from toxlib.book_build.partial_runs import new_partial, stale_partials


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_a_killed_runs_partial_goes_and_a_live_ones_stays(tmp_path):
    output = tmp_path / "sass.ipynb"
    killed = tmp_path / f".sass.{_dead_pid()}.abc123.running.json"
    older = tmp_path / ".sass.xyz789.running.json"  # an older toxlib's name, without a process id
    live = tmp_path / f".sass.{os.getppid()}.def456.running.json"
    other = tmp_path / f".scorers.{_dead_pid()}.abc123.running.json"  # another chapter's: not this run's business
    for path in (killed, older, live, other):
        path.write_text("{}")
    assert stale_partials(output) == sorted([killed, older])
    mine = new_partial(output)
    assert not killed.exists() and not older.exists() and live.exists() and other.exists()
    assert mine.exists() and mine.name.startswith(f".sass.{os.getpid()}.") and mine.name.endswith(".running.json")
    assert stale_partials(output) == []
