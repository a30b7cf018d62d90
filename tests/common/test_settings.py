"""Every environment variable toxlib reads is declared in ``toxlib.common.settings`` and read there alone; the
README lists them from that declaration; values a declaration does not allow are refused with the variable's name."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toxlib.common import settings

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "toxlib"
SETTINGS_MODULE = PACKAGE / "common" / "settings.py"
#: a variable's name in code or prose ("TOXLIB_SOURCE.txt", a file name, is not one)
VARIABLE = re.compile(r"\bTOXLIB_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_.])")


def _is_environ(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os")


def environment_reads(tree: ast.AST) -> list[int]:
    """Lines that read one environment variable by name: ``os.environ.get(...)``, ``os.environ[...]`` read,
    ``os.getenv(...)``, ``... in os.environ``. Writes and handing the whole environment on are not reads."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if (f.attr == "get" and _is_environ(f.value)) or (f.attr == "getenv" and isinstance(f.value, ast.Name)
                                                                and f.value.id == "os"):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(_is_environ(c) for c in node.comparators):
            lines.append(node.lineno)
    return lines


def test_the_reader_finds_every_kind_of_read_and_no_write():
    code = ("import os\na = os.environ.get('X')\nb = os.environ['Y']\nc = os.getenv('Z')\nd = 'W' in os.environ\n"
            "os.environ['V'] = '1'\nos.environ.setdefault('U', '1')\nenv = {**os.environ}\n")
    assert environment_reads(ast.parse(code)) == [2, 3, 4, 5]


def test_no_module_but_settings_reads_a_variable_by_name():
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(PACKAGE.rglob("*.py")) if path != SETTINGS_MODULE
             for line in environment_reads(ast.parse(path.read_text()))]
    assert not found, f"read these through toxlib.common.settings (declared in SETTINGS): {found}"


def test_every_variable_toxlib_names_is_declared():
    named = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".md", ".j2") and path != SETTINGS_MODULE:
            for name in VARIABLE.findall(path.read_text()):
                named.setdefault(name, str(path.relative_to(ROOT)))
    missing = {name: where for name, where in named.items() if name not in settings.SETTINGS}
    assert not missing, f"named but not declared in toxlib.common.settings.SETTINGS: {missing}"


def test_the_settings_page_lists_every_setting_from_the_declaration():
    page = (ROOT / "book" / "settings.md").read_text()
    assert settings.markdown_table() in page, "paste `python -m toxlib settings --markdown` into the Settings section"
    listed = {m for m in re.findall(r"^\| `([A-Z_0-9]+)` \|", page, re.M)}
    assert listed == set(settings.SETTINGS)
    assert "python -m toxlib settings" in (ROOT / "README.md").read_text()


def test_an_undeclared_name_cannot_be_read():
    with pytest.raises(KeyError, match="not a declared setting"):
        settings.raw("TOXLIB_NOT_A_SETTING")


def test_values_are_parsed_and_refused_by_name(monkeypatch):
    monkeypatch.setenv("TOXLIB_THREADS", "two")
    with pytest.raises(settings.SettingError, match="TOXLIB_THREADS='two'"):
        settings.whole_number("TOXLIB_THREADS")
    monkeypatch.setenv("TOXLIB_THREADS", " 3 ")
    assert settings.whole_number("TOXLIB_THREADS") == 3
    monkeypatch.delenv("TOXLIB_THREADS")
    assert settings.whole_number("TOXLIB_THREADS") is None
    for text, on in (("off", False), ("0", False), ("No", False), ("on", True), ("", True)):
        monkeypatch.setenv("TOXLIB_RECORD", text)
        assert settings.flag("TOXLIB_RECORD") is on, text
    for text, on in (("1", True), ("true", True), ("", False), ("0", False)):
        monkeypatch.setenv("HF_HUB_OFFLINE", text)
        assert settings.flag("HF_HUB_OFFLINE") is on, text
    monkeypatch.setenv("TOXLIB_SERVE_API_KEYS", " a, ,b ")
    assert settings.items("TOXLIB_SERVE_API_KEYS") == ["a", "b"]


def test_overridden_restores_what_was_there(monkeypatch):
    monkeypatch.setenv("TOXLIB_EXECUTOR", "local")
    monkeypatch.delenv("TOXLIB_DEVICE", raising=False)
    with settings.overridden({"TOXLIB_EXECUTOR": "ray", "TOXLIB_DEVICE": "cpu"}):
        assert settings.text("TOXLIB_EXECUTOR") == "ray" and settings.text("TOXLIB_DEVICE") == "cpu"
    assert settings.text("TOXLIB_EXECUTOR") == "local" and not settings.is_set("TOXLIB_DEVICE")


def test_the_command_shows_secrets_only_as_set(monkeypatch):
    env = {"PERSPECTIVE_API_KEY": "sekrit-key-123", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "toxlib", "settings"], capture_output=True, text=True, check=True,
                         env=env, cwd=ROOT).stdout
    assert "sekrit" not in out and re.search(r"PERSPECTIVE_API_KEY +set\n", out)
    assert all(name in out for name in settings.SETTINGS)
