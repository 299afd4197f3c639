"""The index's needle test (project/needle_scan.py) answers as the plain
substring scan it replaces: one pass over the file instead of one per needle."""

import random

from memlint.project.needle_scan import holds_needle


def naive(data: bytes, needles: tuple[bytes, ...]) -> bool:
    return any(n in data for n in needles)


def test_a_needle_inside_a_longer_name_counts_as_the_substring_scan_did():
    assert holds_needle(b"model = ResNet50(x)", (b"Net",))
    assert holds_needle(b"x = build_resnet_model()", (b"resnet",))
    assert not holds_needle(b"x = build_resnet_model()", (b"Resnet",))


def test_needles_that_are_not_ascii_words_are_scanned_as_substrings():
    assert holds_needle(b"torch.load('best_model.pth')", (b"Foo", b"best_model.pth"))
    assert holds_needle("caf\u00e9 = 1".encode(), ("caf\u00e9".encode(),))
    assert holds_needle(b"", (b"",))  # index._ANY: every text holds it
    assert not holds_needle(b"nothing here", ())


def test_random_texts_agree_with_the_substring_scan():
    rng = random.Random(29)
    alphabet = "abAB_1 .(\n\u00e9"
    for _ in range(400):
        data = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))).encode()
        needles = tuple(
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 5))).encode()
            for _ in range(rng.randrange(0, 6))
        )
        assert holds_needle(data, needles) == naive(data, needles), (data, needles)


def test_attribute_needles_are_looked_up_by_the_word_after_a_dot_not_scanned_each():
    from memlint.project.index import attribute_needles
    from memlint.project.needle_scan import _prepared

    needles = tuple(sorted(n for attr in ("G", "config", "net") for n in attribute_needles(attr)))
    assert _prepared(needles)[2] == ()  # no substring scan per attribute needle
    assert holds_needle(b"evaluate(solver.G)", needles)
    assert holds_needle(b"self.net.eval()", needles)
    assert not holds_needle(b"self.network.eval()", needles)  # the word ends at the tail
    assert not holds_needle(b"self.config.vocab_size", needles)
    assert not holds_needle(b"G.eval() ; config)", needles)  # no dot before the word


def test_random_dotted_texts_agree_with_the_substring_scan():
    rng = random.Random(6)
    for _ in range(400):
        data = "".join(rng.choice(["a", "ab", "_", ".", "(", ")", ",", " ", "\n", "\u00e9"]) for _ in range(30))
        needles = tuple(
            (
                "."
                + "".join(rng.choice("ab_") for _ in range(rng.randrange(1, 3)))
                + rng.choice([")", ",", ".a(", "", "b"])
            ).encode()
            for _ in range(rng.randrange(0, 6))
        )
        assert holds_needle(data.encode(), needles) == naive(data.encode(), needles), (data, needles)
