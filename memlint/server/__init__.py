"""``memlint server``: memlint as a language server over stdio.

Needs the ``server`` extra (pygls 2 and lsprotocol); nothing else in memlint
imports this package, so ``check`` works without them.

- :mod:`.protocol`: the LSP messages the server answers;
- :mod:`.documents`: coalescing edits so only the newest text is linted;
- :mod:`.linting`: the engine on a document or a notebook's cells;
- :mod:`.actions`, :mod:`.hover`: quick fixes, fix-all, noqa; rule docs on hover;
- :mod:`.settings`: ``[tool.memlint]`` and the client's settings.
"""

from __future__ import annotations

MISSING = "memlint server needs the server extra: pip install 'torch-memlint[server]' ({})"


def main() -> int:
    try:
        from memlint.server.protocol import server
    except ImportError as exc:
        import sys

        print(f"memlint: error: {MISSING.format(exc)}", file=sys.stderr)
        return 2
    server.start_io()
    return 0
