"""Gate facts read once, or skipped where the file's names say no: each
answer is the one the full computation gives (s25-speedgate3).

``asks_an_object_to_evaluate`` passes over the calls only where some
callee's last name or keyword is named for evaluation; ``batch_evidence``
and ``step_hooks`` are kept after their first read. Over every rule's
examples (and their fixed texts) and every fixture, the kept answers equal
the uncached ones, and the name check never skips a file the pass over the
calls would accept.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memlint.gate.facts import _PHASES, GateFacts
from memlint.rule.registry import all_rules
from memlint.vocabulary.tokens import DATA_TOKENS, name_tokens

_ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for rule in all_rules():
        for kind in ("valid", "invalid"):
            for i, ex in enumerate(getattr(rule, kind)):
                out.append((f"{rule.code}-{kind}-{i}", ex.source))
                if getattr(ex, "fixed", None):
                    out.append((f"{rule.code}-{kind}-{i}-fixed", ex.fixed))
    for path in sorted((_ROOT / "fixtures").rglob("*.py")):
        out.append((str(path.relative_to(_ROOT)), path.read_text(encoding="utf-8", errors="replace")))
    return out


def _tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _uncached_step_hooks(g: GateFacts) -> bool:
    for name in g.def_names:
        tokens = name_tokens(name)
        if tokens & _PHASES and tokens & {"step", "epoch", "batch"}:
            return True
    return False


def _uncached_batch_evidence(g: GateFacts) -> bool:
    return bool(
        g.trains
        or g.eval_call
        or g.eval_function_loops
        or g.iter_tokens & DATA_TOKENS
        or "DataLoader" in g.idents
        or _uncached_step_hooks(g)
    )


def test_read_once_facts_equal_the_full_computation() -> None:
    checked = asked = 0
    for label, text in _texts():
        tree = _tree(text)
        if tree is None:
            continue
        g = GateFacts(tree)
        checked += 1
        assert g.asks_an_object_to_evaluate == g._call_asks_an_object(), label
        asked += g._call_asks_an_object()
        assert g.step_hooks == _uncached_step_hooks(g), label
        assert g.batch_evidence == _uncached_batch_evidence(g), label
        assert g.batch_evidence == g.batch_evidence  # kept
    assert checked > 500 and asked > 10  # the corpus holds both answers


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("for x in xs:\n    agent.predict(x)\n", True),  # a callee named for evaluation
        ("for x in xs:\n    agent.act(x, deterministic=True, evaluate=True)\n", True),  # a keyword
        ("for x in xs:\n    agent.act(x)\n", False),  # neither: the calls are not read
        ("import joblib as jl\nfor x in xs:\n    jl.predict(x)\n", False),  # an import alias: read, refused
    ],
)
def test_asks_an_object_to_evaluate_name_check(src: str, expected: bool) -> None:
    g = GateFacts(ast.parse(src))
    assert g.asks_an_object_to_evaluate is expected
    assert g._call_asks_an_object() is expected
