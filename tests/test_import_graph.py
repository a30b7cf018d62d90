"""The library's import graph, read from the source with ``ast``: no cycle between modules (counting the package
``__init__`` a submodule import runs first), no private name imported from another package, toxlib imports at the
top of a module (inside a function only for an optional dependency, marked with a comment), a top level that
holds only ``__init__``, ``__main__`` and the ``cli`` package, each package's "May import:" line exact, the metrics
importing nothing from the store, and one folder per paper."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "toxlib"
#: a function-level toxlib import must carry one of these words in a comment on its line, or sit in a ``try``
#: (code that also runs in a kernel without toxlib, ``toxlib.book_build.machine``), or be in the CLI, whose
#: commands import what they run (its package docstring says why)
LAZY_MARKS = ("# optional", "# heavy", "# cycle")  # cycle: the imported package imports this module


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _package_of(module: str) -> str:
    """The package a module's relative imports would start from: itself for an ``__init__``."""
    return module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _imports(module: str):
    """(node, target module, imported name or None, is inside a function, is inside a try) for every toxlib
    import of ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names if a.name.split(".")[0] == "toxlib"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "toxlib":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                targets.append((full, None) if full in MODULES else (node.module, alias.name))
        if not targets:
            continue
        up, in_function, in_try = node, False, False
        while up in parents:
            up = parents[up]
            in_function |= isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef))
            in_try |= isinstance(up, ast.Try)
        for target, name in targets:
            yield node, target, name, in_function, in_try


def import_graph() -> dict[str, set[str]]:
    """{module: modules its import statements run}: the target, and every package ``__init__`` above the target
    that is not also above the importer (those have started already)."""
    graph = {m: set() for m in MODULES}
    for module in MODULES:
        own = _package_of(module)
        for _, target, _, _, _ in _imports(module):
            parts = target.split(".")
            graph[module].add(target)
            for k in range(2, len(parts)):
                ancestor = ".".join(parts[:k])
                if not (own == ancestor or own.startswith(ancestor + ".")):
                    graph[module].add(ancestor)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_package_init():
    graph = {"toxlib.a": {"toxlib.a.x"}, "toxlib.a.x": set(), "toxlib.b.y": {"toxlib.a"}, "toxlib.a.z": {"toxlib.b.y"}}
    assert cycles(graph) == []
    graph["toxlib.a"].add("toxlib.a.z")
    assert cycles(graph) == [["toxlib.a", "toxlib.a.z", "toxlib.b.y"]]


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_no_private_name_crosses_a_package_border():
    crossing = []
    for module in MODULES:
        for node, target, name, _, _ in _imports(module):
            private = name if name else target.rsplit(".", 1)[-1]
            if private.startswith("_") and not private.startswith("__"):
                if target.split(".")[:2] != module.split(".")[:2]:
                    crossing.append(f"{module}:{node.lineno} imports {private} from {target}")
    assert crossing == []


def test_toxlib_imports_sit_at_the_top_unless_marked_optional():
    lazy = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        for node, target, _, in_function, in_try in _imports(module):
            if not in_function or in_try or module.split(".")[:2] == ["toxlib", "cli"]:
                continue
            text = "\n".join(lines[node.lineno - 2:node.end_lineno])  # the line above may hold the comment
            if not any(mark in text for mark in LAZY_MARKS):
                lazy.append(f"{module}:{node.lineno} imports {target} inside a function")
    assert lazy == []


def test_the_top_level_holds_only_the_entry_points_and_each_package_says_its_job():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py"] and (PACKAGE / "cli" / "__init__.py").is_file()
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and "May import:" in doc, f"{init.parent.name}/__init__.py: say its job and what it may import"


def test_every_module_imports_first():
    """Each module imported first, with no toxlib module loaded before it (one interpreter; toxlib's modules are
    dropped from ``sys.modules`` between imports, third-party ones kept): a cycle the graph missed (an import by
    ``importlib``) still fails here."""
    import subprocess
    import sys

    code = ("import importlib, sys, traceback\n"
            f"for name in {sorted(m for m in MODULES if m != 'toxlib.__main__')!r}:\n"
            "    for loaded in [m for m in sys.modules if m == 'toxlib' or m.startswith('toxlib.')]:\n"
            "        del sys.modules[loaded]\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except Exception as exc:\n"
            "        print(f'{name}: {type(exc).__name__}: {exc}')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ""


def _declared_imports(init: Path) -> set[str] | None:
    """The packages a package's docstring says it may import ("May import: a, b (why), c."), None without it."""
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    line = next((ln for ln in doc.splitlines() if ln.startswith("May import:")), None)
    if line is None:
        return None
    words = line.removeprefix("May import:").split("(")[0]
    return {w.strip(" .") for w in words.split(",") if w.strip(" .")}


def test_each_package_imports_only_what_its_docstring_allows():
    allowed_everywhere = {"toxlib"}  # the version string
    wrong = []
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        package = init.parent.name
        declared = _declared_imports(init)
        assert declared is not None, f"{package}/__init__.py has no 'May import:' line"
        for module in MODULES:
            if module.split(".")[1:2] != [package]:
                continue
            for node, target, _, _, _ in _imports(module):
                other = target.split(".")[1] if "." in target else "toxlib"
                if other != package and other not in declared | allowed_everywhere:
                    wrong.append(f"{module}:{node.lineno} imports {target}; {package} may import {sorted(declared)}")
    assert wrong == []


def _package_imports() -> dict[str, set[str]]:
    """{package: the other packages its modules import} (the version string's ``toxlib`` left out)."""
    found = {init.parent.name: set() for init in PACKAGE.glob("*/__init__.py")}
    for module in MODULES:
        package = module.split(".")[1] if module.count(".") else None
        if package not in found:
            continue
        for _, target, _, _, _ in _imports(module):
            other = target.split(".")[1] if "." in target else "toxlib"
            if other not in (package, "toxlib"):
                found[package].add(other)
    return found


def test_each_package_declares_only_what_it_imports():
    """The "May import:" lines are exact: a package that stops importing another says so ("nothing of toxlib" for
    none)."""
    unused = {}
    for package, imported in _package_imports().items():
        declared = _declared_imports(PACKAGE / package / "__init__.py") - {"nothing of toxlib"}
        if declared - imported:
            unused[package] = sorted(declared - imported)
    assert unused == {}


def test_the_metrics_import_nothing_from_the_store():
    """Intervals are kept through ``toxlib.common.memo``: no module of ``toxlib.metrics`` imports ``toxlib.store``."""
    assert "store" not in _package_imports()["metrics"]
    assert "store" not in _declared_imports(PACKAGE / "metrics" / "__init__.py")


#: the parts every paper's folder holds, whichever folders there are (the debiasing paper's printed values and
#: claims live in ``findings``)
PAPER_PARTS = ({"printed", "paper_claims", "prose", "captions"}, {"findings", "prose", "captions"})


def test_one_folder_per_paper():
    papers = PACKAGE / "papers"
    folders = {p.name for p in papers.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert len(folders) >= 4
    assert sorted(p.name for p in papers.glob("*.py")) == ["__init__.py", "printed.py"]  # the shared Printed type
    for paper in folders:
        modules = {p.stem for p in (papers / paper).glob("*.py")}
        assert any(parts <= modules for parts in PAPER_PARTS), \
            f"papers/{paper} lacks {sorted(min((parts - modules for parts in PAPER_PARTS), key=len))}"
        for other in folders - {paper}:  # a paper's code does not reach into another paper's folder
            reaching = [f"{m}: {t}" for m in MODULES if m.startswith(f"toxlib.papers.{paper}.")
                        for _, t, _, _, _ in _imports(m) if t.startswith(f"toxlib.papers.{other}")]
            assert reaching == [], reaching
