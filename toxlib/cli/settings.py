"""``python -m toxlib settings``: every environment variable toxlib reads (``toxlib.common.settings``), with its
default, what it does and its value here (secrets shown as "set", never their value); ``--markdown``: the book's
"Settings" page."""

from __future__ import annotations

#: variables whose values are secrets: shown as "set" or "unset"
SECRETS = ("PERSPECTIVE_API_KEY", "TOXLIB_SERVE_API_KEYS")


def _settings(args) -> int:
    from toxlib.common import settings

    if args.markdown:
        print(settings.markdown_table())
        return 0
    width = max(len(name) for name in settings.SETTINGS)
    for group in dict.fromkeys(s.group for s in settings.SETTINGS.values()):
        print(f"[{group}]")
        for s in (s for s in settings.SETTINGS.values() if s.group == group):
            value = settings.raw(s.name)
            shown = ("set" if value else "unset") if s.name in SECRETS else (value or f"unset: {s.default or 'none'}")
            print(f"  {s.name:<{width}}  {shown}\n  {'':<{width}}  {s.meaning}")
    return 0


def add_commands(sub) -> None:
    command = sub.add_parser("settings", help="every environment variable toxlib reads: default, meaning, value here")
    command.add_argument("--markdown", action="store_true",
                         help="print the book's Settings page (a Markdown table) instead")
    command.set_defaults(func=_settings)
