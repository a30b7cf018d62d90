"""Every hand-kept version string that keys a cache has a guard: the digest of the code it describes is held here,
so a change to that code without a bump of the string fails, naming the string to bump.

The digest is of the code's syntax tree with docstrings left out (comments, formatting and docstrings may change
freely), and not of the module's name or path: moving a module changes no digest, as it changes no cache
key. When a test fails:
  - the change can alter a cached row (a generation, a score, an NLL, a trained artefact): bump the version string,
    then put the new version and the digest the failure prints into GUARDS;
  - it cannot (a rename, a refactor with the same numbers, checked): put the new digest into GUARDS and say in the
    commit message why the cached rows stay valid.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect

import pytest

#: version string (module:attribute, a dict key after "[") -> (its value, the modules it describes, their digest)
GUARDS = {
    "toxlib.generate.config:ENGINE_VERSION": (
        5, ["toxlib.generate.engine", "toxlib.generate.nucleus", "toxlib.models.batching", "toxlib.generate.kv_cache",
            "toxlib.generate.decoder_choice"],
        "fdcdf371665d858a"),
    # the GPU path's own revision, keyed into GPU rows beside ENGINE_VERSION; guarded from the split that made these
    # modules (no GPU row existed before it: the path had never run on a GPU)
    "toxlib.generate.config:GPU_ENGINE_VERSION": (
        1, ["toxlib.generate.static_decode", "toxlib.generate.static_sizing", "toxlib.generate.graphed_step",
            "toxlib.generate.sampler_capacity", "toxlib.generate.nucleus_batch"],
        "e67aea7e28278ecb"),
    "toxlib.models.perplexity:METHOD_VERSIONS[causal]": (
        "causal-nll-v4", ["toxlib.models.perplexity", "toxlib.models.length_groups"], "bed97f0b6ff49d0b"),
    "toxlib.papers.sass.prompt_classifier:NEXT_TOKEN_VERSION": (
        "next-token-v3", ["toxlib.papers.sass.prompt_classifier"], "2e7f79a93c239ac0"),
    "toxlib.scorers.training:SCORER_RECIPE_VERSION": (
        "minilm-rtp-3", ["toxlib.scorers.training", "toxlib.models.schedule"], "27279c6c9ffdcba4"),
    "toxlib.scorers.bilstm:BiLSTMScorer.version": (
        "tox-block-0.1.2-torch-1", ["toxlib.scorers.bilstm"], "e893d85754ef2b99"),
    "toxlib.steer.pplm_discriminator:DISCRIMINATOR_VERSION": (
        "pplm-head-v1", ["toxlib.steer.pplm_discriminator"], "bb15cbbdaf3fc021"),
    "toxlib.steer.vocab_shift:VERSION": ("vocab-shift-gis-v1", ["toxlib.steer.vocab_shift"], "ebcd182f4198cacd"),
    "toxlib.steer.pplm:PPLM.version": ("pplm-past-v2", ["toxlib.steer.pplm"], "921fb58295dae8cb"),
    # the generation chapter's nucleus statistics, a recorded table since the split that made the module
    "toxlib.studies.nucleus_steps:STEPS_VERSION": (1, ["toxlib.studies.nucleus_steps"], "5a254c65f3f25027"),
    "toxlib.steer.adapt_key:RECIPE_VERSION": (
        "adapt-1",
        ["toxlib.steer.adapt_key", "toxlib.steer.adapt_train", "toxlib.steer.adapt", "toxlib.models.schedule"],
        "2cdcea8d06b1a287"),
}


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return tree


def code_digest(modules: list[str]) -> str:
    """sha256 (16 hex digits) of the modules' syntax trees in the order given, docstrings left out (their names are
    not part of it)."""
    digest = hashlib.sha256()
    for name in modules:
        tree = _without_docstrings(ast.parse(inspect.getsource(importlib.import_module(name))))
        digest.update(ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()[:16]


def current_value(where: str):
    module, _, attribute = where.partition(":")
    attribute, _, key = attribute.partition("[")
    value = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value[key.rstrip("]")] if key else value


@pytest.mark.parametrize("where", list(GUARDS))
def test_a_version_string_changes_with_the_code_it_describes(where):
    recorded, modules, digest = GUARDS[where]
    value, now = current_value(where), code_digest(modules)
    if value != recorded:
        pytest.fail(f"{where} is now {value!r} (was {recorded!r}): record the bump in GUARDS of {__file__}: "
                    f"({value!r}, {modules!r}, {now!r})")
    assert now == digest, (
        f"the code {where} describes ({', '.join(modules)}) changed (digest {now}, recorded {digest}) but "
        f"{where} is still {value!r}: bump it if cached rows can change (then record the new value and digest "
        "here), or record the new digest and say in the commit why the rows stay valid")


def test_the_guard_sees_a_code_change_but_not_a_docstring(monkeypatch):
    import toxlib.steer.adapt as module

    source = inspect.getsource(module)
    before = code_digest(["toxlib.steer.adapt"])
    monkeypatch.setattr(inspect, "getsource", lambda m: source.replace('"""', '"""Edited. ', 1))
    assert code_digest(["toxlib.steer.adapt"]) == before
    monkeypatch.setattr(inspect, "getsource", lambda m: source + "\nEXTRA = 1\n")
    assert code_digest(["toxlib.steer.adapt"]) != before
