#!/usr/bin/env bash
# Build the whole book: set up .venv, execute every notebook in _toc.yml with its default parameters
# (papermill), then build the HTML into _build/html. Extra arguments go to `python -m toxlib book`
# (for example --only sass, or --smoke).
set -euo pipefail
TOXLIB_EXTRAS="${TOXLIB_EXTRAS:-book}"  # papermill, jupyter-book and the kernel (pyproject.toml [book])
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
python -m toxlib book "$@"
