"""The wheel's companion files: what ``toxlib report`` needs from the checkout, copied into the built package.

Setuptools ships only files inside the package; the chapter notebooks, the data registry and the book's published
claims live beside it in the checkout. This build step copies the files named by ``[tool.toxlib] wheel-companion``
in pyproject.toml into ``toxlib/companion/`` of the build, keeping their paths relative to the checkout (a failed
run's leftover ``*.failed.ipynb`` left out), so an installed toxlib finds them where
``toxlib.store.paths.companion_root`` looks. An editable install reads the checkout itself and copies nothing.
MANIFEST.in puts the same files in a source distribution, so a wheel built from one carries them too.
"""

import shutil
import tomllib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithCompanion(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toxlib"]["wheel-companion"]
        target = Path(self.build_lib) / "toxlib" / "companion"
        shutil.rmtree(target, ignore_errors=True)  # a build folder reused from an earlier build keeps no stale file
        for pattern in patterns:
            found = sorted(p for p in ROOT.glob(pattern) if not p.name.endswith(".failed.ipynb"))
            if not found:
                raise SystemExit(f"wheel-companion: {pattern!r} matches no file in {ROOT}")
            for source in found:
                copy = target / source.relative_to(ROOT)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)


setup(cmdclass={"build_py": BuildWithCompanion})
