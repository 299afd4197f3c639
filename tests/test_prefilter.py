"""The token pre-filter selects exactly the rules its first, plain form did.

screen.applicable_rules scans each token once, in the squeezed text alone
where it can, and squeezes spacing with str.replace where no line
continuation is present: speed-ups only. The reference below is the pre-filter as it was written first (a scan
per rule and token, the regex squeeze): every text here must get the same
rules, in the same order, from both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memlint.lint.screen import _SPACED, _SPACING, _squeeze, _squeeze_utf8, applicable_rules
from memlint.rule.registry import all_rules

RULES = list(all_rules())
TOKENS = sorted({token for rule in RULES for token in rule.tokens})
CORPUS = Path(__file__).parent / "corpus"

# Everything that the squeeze removes or keeps next to a token: spaces, tabs,
# form feeds, line continuations (LF, CRLF, a lone CR), and backslashes that
# are not continuations.
SEPARATORS = (" ", "  ", "\t", "\f", " \t", "\\\n", "\\\r\n", "\\\r", "\\ \n", "\\\\\n", "\\\\\r\n\n", "\n")


def reference(text, rules):
    chosen, left = [], []
    for rule in rules:
        (chosen if any(tok in text for tok in rule.tokens) else left).append(rule)
    if left and _SPACED.search(text):
        squeezed = _SPACING.sub("", text)
        chosen += [r for r in left if any(tok.replace(" ", "") in squeezed for tok in r.tokens)]
        chosen.sort(key=list(rules).index)
    return chosen


def split_tokens():
    """Each token cut at every position by every separator, alone and inside a
    line that the pre-filter's spacing check accepts (``x . y``)."""
    for token in TOKENS:
        for cut in range(len(token) + 1):
            for sep in SEPARATORS:
                spaced = token[:cut] + sep + token[cut:]
                yield spaced
                yield f"x . y\n{spaced}\n"
                yield f"f (a)\nz = {spaced}(1)\n"


@pytest.mark.parametrize("sep", SEPARATORS)
def test_squeeze_is_the_regex(sep):
    for text in (f"a{sep}b", f"{sep}{sep}", f"x{sep}.{sep}to{sep}(d)", f"#{sep}\\\n{sep}y", "\\" + sep + "\n"):
        assert _squeeze(text) == _SPACING.sub("", text), repr(text)


# Characters past ASCII (stored two or four bytes wide, or, with a lone
# surrogate, not encodable as plain UTF-8) around and inside the text.
WIDE = ("é", "—", "中文", "🤗", "\udcff")


@pytest.mark.parametrize("sep", SEPARATORS)
def test_the_utf8_squeeze_is_the_squeeze_encoded(sep):
    for wide in WIDE:
        for text in (f"{wide}{sep}b", f"x{sep}.{sep}to{sep}({wide})", f"#{wide}{sep}\\\n{sep}y", wide + sep * 2):
            assert _squeeze_utf8(text) == _squeeze(text).encode("utf-8", "surrogatepass"), repr(text)


def test_tokens_in_texts_past_ascii_select_the_same_rules():
    """The squeezed text is scanned as UTF-8: a token is found there exactly
    where it is in the text, whatever characters stand around it."""
    for i, spaced in enumerate(split_tokens()):  # each split once, the wide character and its place in turn
        wide = WIDE[i % len(WIDE)]
        text = (f"# {wide} .\n{spaced}\n", f"{spaced}{wide}", f"{wide}{spaced} . x")[i % 3]
        assert applicable_rules(text, RULES) == reference(text, RULES), repr(text)


def test_every_token_split_by_spacing_selects_the_same_rules():
    texts = list(split_tokens())
    assert len(texts) > 10_000
    for text in texts:
        assert applicable_rules(text, RULES) == reference(text, RULES), repr(text)


def test_rule_subsets_keep_their_order():
    text = "import torch\nx . to (d)\nscaler = GradScaler()\nloss.backward()\n"
    twice = [*RULES[:5], *RULES[2:4], *RULES[::-4]]  # a rule listed twice keeps its first place
    for rules in (RULES[::-1], RULES[::2], RULES[1::3], RULES[:1], [], twice):
        assert applicable_rules(text, rules) == reference(text, rules)


def test_tokens_with_other_spacing_characters_are_looked_for_in_the_text_too():
    # Not among today's tokens: a continuation around them would hide them
    # from the squeezed text, where the text itself still holds them.
    class Tab(RULES[0]):
        tokens = ("a\tb",)

    class Newline(RULES[0]):
        tokens = ("\nfoo", "x\\")

    rules = [Tab, Newline]
    for text in ("x . y\na\tb\n", "x . y\\\nfoo\n", "x . y\nbar x\\\n", "x . y\n", "a b\nfoo\n"):
        assert applicable_rules(text, rules) == reference(text, rules), repr(text)


def test_examples_and_corpus_select_the_same_rules():
    texts = [ex.source for rule in RULES for ex in (*rule.invalid, *rule.valid)]
    texts += [ex.fixed for rule in RULES for ex in rule.invalid if ex.fixed]
    texts += [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py"))]
    assert len(texts) > 500
    for text in texts:
        assert applicable_rules(text, RULES) == reference(text, RULES)
        # The same text with line continuations, so the regex squeeze runs too.
        continued = text.replace("(", "(\\\n")
        assert applicable_rules(continued, RULES) == reference(continued, RULES)
