"""The wheel's companion files: what ``toxlib report`` needs from the checkout, copied into the built package.

Setuptools ships only files inside the package; the chapter notebooks, the data registry and the book's published
claims live beside it in the checkout. This build step copies the files named by ``[tool.toxlib] wheel-companion``
in pyproject.toml into ``toxlib/companion/`` of the build, keeping their paths relative to the checkout, so an
installed toxlib finds them where ``toxlib.store.paths.companion_root`` looks. An editable install reads the
checkout itself and copies nothing.
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
        for pattern in patterns:
            found = sorted(ROOT.glob(pattern))
            if not found:
                raise SystemExit(f"wheel-companion: {pattern!r} matches no file in {ROOT}")
            for source in found:
                copy = target / source.relative_to(ROOT)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)


setup(cmdclass={"build_py": BuildWithCompanion})
