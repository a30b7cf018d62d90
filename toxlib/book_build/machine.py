"""What a run record says about where it ran: the commit of the checkout, the machine, the libraries that decide
the numbers, and the CPU facts that change kernels. Light on purpose (no papermill, no torch at import): the
benchmarks describe their machine with it too, and ``toxlib.book_build.runner`` sends these functions' source into each
notebook's kernel (``kernel_facts`` runs there), so each stays self-contained: standard-library imports only, and
toxlib's own imports inside a ``try``.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

# re-exported: the runner sends their source to kernels
from toxlib.common.provenance import DECIDING_PATHS, git_commit, uncommitted_files  # noqa: F401


def machine_description() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def library_versions() -> str:
    """The releases of the libraries that decide the numbers, as "torch 2.13.0, transformers 5.24.0, ...": bf16
    texts can differ across releases as well as across CPUs, so a record names both. A missing one is left out."""
    from importlib import metadata

    found = []
    for name in ("torch", "transformers", "numpy", "scipy", "scikit-learn"):
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def kernel_facts() -> dict:
    """What the kernel runs: {"toxlib_version", "toxlib_path", "commit", "uncommitted", "machine", "libraries", "cpu",
    "samples", "rows"}: the toxlib it imports (its version, the folder it was imported from, the commit of that checkout
    with "+dirty" and the files that make it so: ``toxlib.common.provenance``), the kernel's library releases, and
    where its rows came from (run inside it, at the end)."""
    try:
        import toxlib as imported
    except Exception as exc:  # a kernel without toxlib still gets a record
        return {"toxlib_version": f"not importable ({type(exc).__name__})", "commit": "unknown",
                "machine": machine_description(), "libraries": library_versions()}
    root = Path(imported.__file__).resolve().parent.parent
    # a toxlib installed from a wheel has no checkout of its own (git would answer for any repository above it)
    own = (root / ".git").exists()
    facts = {"toxlib_version": getattr(imported, "__version__", "unknown"),
             "toxlib_path": str(Path(imported.__file__).resolve().parent),
             "commit": git_commit(root) if own else "unknown (installed, not a checkout)",
             "uncommitted": uncommitted_files(root) if own else [], "machine": machine_description(),
             "libraries": library_versions()}
    try:  # the CPU model, the instruction sets that change kernels and MKL's mode: they decide a row's bits
        from toxlib.models.cpu_kernels import describe_cpu
        facts["cpu"] = describe_cpu()
    except Exception as exc:  # an older toxlib, or no torch
        facts["cpu"] = f"unknown ({type(exc).__name__})"
    try:  # where this kernel's rows came from: the sample record, the user's cache, or computed here
        from toxlib.store.record_usage import served_summary
        facts["samples"] = served_summary()
    except Exception as exc:  # an older toxlib
        facts["samples"] = f"unknown ({type(exc).__name__})"
    try:
        from toxlib.store.record_usage import served_counts
        facts["rows"] = served_counts()
    except Exception:  # an older toxlib: no counts
        facts["rows"] = {}
    return facts
