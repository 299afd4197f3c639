"""``memlint server``: memlint as a language server over stdio.

Needs the ``server`` extra (pygls 2 and lsprotocol); nothing else in memlint
imports this package, so ``check`` works without them.

- :mod:`.protocol`: the LSP messages the server answers;
- :mod:`.documents`: coalescing edits so only the newest text is linted;
- :mod:`.linting`: the engine on a document or a notebook's cells;
- :mod:`.projects`: the workspace's project index, and which open documents
  a change makes stale;
- :mod:`.actions`, :mod:`.hover`: quick fixes, fix-all, noqa; rule docs on hover;
- :mod:`.settings`: ``[tool.memlint]`` and the client's settings.
"""

from __future__ import annotations

from memlint import install_hint


def main() -> int:
    try:
        from memlint.server.protocol import server
    except ImportError as exc:
        import sys

        print(
            f"memlint: error: memlint server needs the server extra: {install_hint('server')} ({exc})", file=sys.stderr
        )
        return 2
    import gc

    from memlint.rule.registry import select_rules

    select_rules()  # every rule module imported before the freeze below
    # The server lives long and every lint allocates a whole libcst tree, so
    # the cyclic collector runs often; without this, each full collection
    # also walks the tens of thousands of objects pygls, lsprotocol and the
    # rules made at start-up, which never become garbage. Measured:
    # change -> diagnostics 2.9-3.5x libcst's parse of the text, 2.4x frozen
    # (bench/server_latency.py).
    gc.collect()
    gc.freeze()
    # A lint of a 300-line script leaves ~4,000 new container objects behind
    # (its tree replaces the last one's) and allocates ~8,000 on the way, so
    # at the default threshold (700) the collector runs about ten times per
    # lint and, the frozen heap aside, mostly rescans the live trees: 4.4 ms
    # of a 68 ms lint. Reference counting frees nearly all of it (libcst's
    # trees hold no cycles): a collection every 20,000 allocations is plenty.
    gc.set_threshold(20_000, 10, 10)
    server.start_io()
    return 0
