"""The key of a bootstrap interval: the same data and statistic give the same bounds, so they are computed once and
kept (``toxlib.common.memo``; the metrics know nothing of where).

``interval_key`` is a sha256 over everything the bounds depend on: the data arrays' bytes, dtypes and shapes; the
statistic's fingerprint (``fingerprint``: its code, its closure's values, its defaults, the simple values of the
globals it names, recursively for the functions it closes over); the bootstrap settings; the versions of numpy and
scipy; and a digest of the contents of toxlib's own source files (``toxlib_source_digest``), so any change to
toxlib's code computes intervals afresh. No module path, qualified name or file path enters it: moving code changes
no key. A statistic whose fingerprint cannot be taken (it closes over an object of unknown kind, or names a global
that is neither a module, a function nor a plain value) has no key: its interval is computed each time.
"""

from __future__ import annotations

import functools
import hashlib
import types
from pathlib import Path

import numpy as np

from toxlib.common.digest import file_sha256

#: modules whose functions are taken as fixed by their name and the library version in the key
_STABLE_LIBRARIES = ("numpy", "scipy", "math", "builtins", "pandas", "sklearn", "statistics")


class Unfingerprintable(Exception):
    """Raised inside ``fingerprint`` for an object whose effect on a statistic cannot be captured."""


@functools.lru_cache(maxsize=1)
def toxlib_source_digest() -> str:
    """sha256 over the contents of toxlib's .py files (each file's sha256, sorted; not their paths): changes whenever
    toxlib's code does, and not when a file only moves."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(file_sha256(path) for path in root.rglob("*.py"))
    return hashlib.sha256("\n".join(files).encode()).hexdigest()


def fingerprint(obj, _seen: frozenset = frozenset()) -> str:
    """A text that changes whenever ``obj`` would compute something else. Plain values by repr, arrays by bytes,
    functions by code, closure, defaults and the plain globals their code names (functions of numpy, scipy and
    other fixed libraries by name). Raises ``Unfingerprintable`` for anything else."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, np.ndarray):
        data = np.ascontiguousarray(obj)
        if data.dtype == object:
            raise Unfingerprintable("an object array")
        return f"array:{data.dtype.str}:{data.shape}:{hashlib.sha256(data.tobytes()).hexdigest()}"
    if isinstance(obj, np.generic):
        return fingerprint(obj.item(), _seen)
    if isinstance(obj, (tuple, list)):
        return f"{type(obj).__name__}(" + ",".join(fingerprint(o, _seen) for o in obj) + ")"
    if isinstance(obj, dict):
        return "dict(" + ",".join(f"{fingerprint(k, _seen)}={fingerprint(v, _seen)}" for k, v in obj.items()) + ")"
    if isinstance(obj, types.ModuleType):
        return f"module:{obj.__name__}"
    if isinstance(obj, functools.partial):
        parts = (obj.func, obj.args, obj.keywords)
        return "partial(" + ",".join(fingerprint(part, _seen) for part in parts) + ")"
    module = getattr(obj, "__module__", None) or ""
    if callable(obj) and module.split(".")[0] in _STABLE_LIBRARIES:  # a library's function: by its public name
        return f"library:{module}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
    if isinstance(obj, type) and module.split(".")[0] == "toxlib":  # its code is in the source digest
        return f"class:{obj.__name__}"
    if isinstance(obj, types.FunctionType):
        if id(obj) in _seen:
            return "recursion"
        seen = _seen | {id(obj)}
        code = obj.__code__
        cells = [c.cell_contents for c in obj.__closure__ or ()]
        named = {n: obj.__globals__[n] for n in _global_names(code) if n in obj.__globals__}
        return "function(" + ";".join([
            _code_digest(code), fingerprint(obj.__defaults__, seen), fingerprint(obj.__kwdefaults__, seen),
            fingerprint(cells, seen), fingerprint(named, seen)]) + ")"
    raise Unfingerprintable(f"{type(obj).__qualname__} object")


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _global_names(const)
    return sorted(set(names))


def _code_digest(code: types.CodeType) -> str:
    digest = hashlib.sha256(code.co_code)
    for const in code.co_consts:
        digest.update((_code_digest(const) if isinstance(const, types.CodeType) else repr(const)).encode())
    digest.update(repr(code.co_names).encode())
    return digest.hexdigest()


def interval_key(data: tuple, statistic, settings: dict) -> str | None:
    """The memo key of a bootstrap of ``statistic`` over ``data`` (a tuple of arrays) with ``settings``; None when
    the statistic cannot be fingerprinted (then the interval is not memoised)."""
    import scipy

    try:
        parts = [fingerprint(tuple(np.asarray(d) for d in data)), fingerprint(statistic), fingerprint(settings)]
    except Unfingerprintable:
        return None
    parts += [np.__version__, scipy.__version__, toxlib_source_digest()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
