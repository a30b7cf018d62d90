"""Names that say one thing: no package named as tools name build output, the four parts around the book's
results named apart (publishing, the report card, the record's tools, the record's reader), and every public
module-level name defined in one module, but for the names a kind of module defines for the same role."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "toxlib"
#: folder names that build tools, test collectors and ignore files take for output
OUTPUT_NAMES = {"build", "_build", "dist", "out", "output", "target", "site", "htmlcov", "tmp"}
#: names each module of one kind defines for the same role: a chapter's declaration and the function that computes
#: it, a paper's captions, printed values and rules, claims and exercise prose, a CLI module's commands, a module's
#: logger, a scorer's pip package, the source file a paper's authors' values come from
ROLE_NAMES = {"CHAPTER", "compute", "CAPTIONS", "PAPER", "RULES", "claims", "exercise_prose", "add_commands", "log",
              "PACKAGE", "SOURCE_FILE", "source_text"}


def test_no_package_is_named_as_build_output():
    folders = {p.name for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert not folders & OUTPUT_NAMES, f"packages a tool would skip as output: {sorted(folders & OUTPUT_NAMES)}"


def test_publishing_the_report_card_and_the_record_tools_and_reader_are_named_apart():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert {"publish", "reportcard", "record_tools"} <= packages and not {"report", "record"} & packages
    assert (PACKAGE / "store" / "record_reader.py").exists() and not (PACKAGE / "store" / "record.py").exists()


def _public_definitions(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names += [e.id for e in elements if isinstance(e, ast.Name)]
    return [n for n in names if not n.startswith("_") and n != "__all__"]


def test_every_public_name_has_one_home():
    homes = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py":
            for name in _public_definitions(path):
                homes[name].add(str(path.relative_to(PACKAGE.parent)))
    shared = {name: sorted(where) for name, where in homes.items() if len(where) > 1 and name not in ROLE_NAMES}
    assert not shared, f"one name, several meanings (rename, or import the one definition): {shared}"
