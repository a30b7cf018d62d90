"""``python -m toxlib data list|fetch``: the registry's data files."""

from __future__ import annotations

from toxlib.common.progress import tqdm
from toxlib.data.sources import fetch, registry


def _data(args) -> int:
    reg = registry()
    if args.action == "list":
        for name in reg.names():
            s = reg[name]
            print(f"{name:28s} {s.bytes:>9,d} B  {s.license:40.40s}  {s.path}")
        return 0
    names = args.names or reg.names()
    for name in names:
        reg[name]  # an unknown name fails before anything is fetched
    for name in tqdm(names, desc="fetching data", unit="file", disable=len(names) < 2):
        path = fetch(name, mirror=args.mirror, force=args.force)
        tqdm.write(f"{name}: {path}")
    return 0


def add_commands(sub) -> None:
    """``data list`` and ``data fetch``."""
    data = sub.add_parser("data", help="list or fetch the registry's data files")
    data_sub = data.add_subparsers(dest="action", required=True)
    data_sub.add_parser("list", help="list every registered data file")
    fetch = data_sub.add_parser("fetch", help="download (or copy from a mirror) and verify data files")
    fetch.add_argument("names", nargs="*", help="source names (default: all)")
    fetch.add_argument("--mirror", help="copy from this directory (owner/repo/path layout) instead of downloading; "
                       "default $TOXLIB_DATA_MIRROR")
    fetch.add_argument("--force", action="store_true", help="fetch again even if the file is present")
    data.set_defaults(func=_data)
