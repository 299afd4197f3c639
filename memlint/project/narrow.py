"""Which needle holders a view must read now, and which only if it asks.

A view of one module (``memlint check one_file.py`` with no cache: pre-commit's
first run, CI) used to summarise every module whose text holds a needle
(index.needles_for). On transformers that is ~800 of 3,000 modules for
``modeling_bert.py``: ``_init_weights`` (a method name that says it loads
weights, used by almost every model) and ``eager_attention_forward`` (a
function almost every model defines again for itself), ~40 CPU s.

What each kind of needle is asked for decides whether its holders must be
summarised up front:

- a function or class of the viewed module (``call`` words): its holders are
  read for their calls, constructions, subclasses and typed call sites that
  land in the viewed module. Such a spelling names the viewed module's
  function only through an import (``from m import f``), an attribute
  (``m.f``, ``pkg.m.f``) or a star import. A holder whose every occurrence
  is its own definition, a bare use with no import naming the word, a
  comment, a ``self.``/``cls.`` attribute or sits beside a backtick (never
  Python 3 code) cannot: summarised only if the view asks for it otherwise;
- a method name that loads weights (``loading_uses``) and a method of a model
  (``named_forward``'s definers): existential or first-failure questions the
  index answers over its holders lazily, in the same order as before
  (index.ProjectIndex.loading_used_elsewhere, typed_objects.named_forward);
- anything else (attribute needles, checkpoint file names, a name the viewed
  module calls through ``eval``, a needle kind added later): every holder is
  summarised, as before.

A holder left out is summarised with the same needles the moment the view
asks about it (index.ProjectIndex._full), so every direct question gets the
answer it got before; only the project-wide maps skip it, and by the above
no entry it would add can name the viewed module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Iterator

from memlint.read.source import read_bytes

NONE, LAZY, EAGER = 0, 1, 2

_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_RUN = re.compile(rb"[A-Za-z0-9_]+")
# An attribute needle's head: a dot and the attribute (index.attribute_needles).
_ATTRIBUTE_NEEDLE = re.compile(rb"\.[A-Za-z0-9_]+(?![A-Za-z0-9_])")
_STAR = re.compile(rb"import\s*\*")
# The bytes of a word (an empty slice, at either end of the text, is none).
_WORD_BYTES = frozenset(bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_DEFINES = re.compile(rb"(?:^|[^A-Za-z0-9_])(?:def|class)[ \t]+$")
_RECEIVER = re.compile(rb"([A-Za-z0-9_]+)[ \t]*$")
_SPACE = b" \t\r\n\\"
# ``from <module> `` before an ``import`` keyword, alone on its line.
_FROM = re.compile(rb"[ \t]*from[ \t]+([A-Za-z0-9_.]+)[ \t]+")


class Triage:
    """The verdict on one module's bytes for a view of the modules at
    ``paths``, whose needles are ``needles`` (index.needles_for): of them,
    ``calls`` name their functions and classes, ``lazy`` their loading and
    model methods; ``eval_names`` what they call through ``eval``
    (index.triage_for)."""

    def __init__(
        self,
        needles: tuple[bytes, ...],
        calls: Iterable[str],
        lazy: Iterable[str],
        eval_names: Iterable[str] = (),
        paths: Iterable[str] = (),
        attributes: Iterable[str] = (),
    ) -> None:
        calls, lazy = set(calls), set(lazy)
        words = {n for n in needles if _WORD.fullmatch(n)}
        # Attribute needles (``.G.eval(``) of the plain classes' attributes:
        # their holders, any module spelling ``.G``, are read lazily
        # (index._switched_attrs).
        self.attributes = tuple(sorted(a.encode() for a in set(attributes)))
        dotted = {b"." + a for a in self.attributes}
        self.needles = needles
        self.calls = tuple(sorted(n for n in words if n.decode() in calls))
        self.lazy = tuple(sorted(n for n in words if n.decode() in lazy))
        # A call word that is also a loading or model method is still read
        # lazily for those questions when no occurrence can call.
        known = set(self.calls) | set(self.lazy)
        known.update(n for n in needles if _attribute_head(n) in dotted)
        # Summarised whenever held, as before; plus the names called through
        # ``eval`` (cpu_builders_everywhere reads the holders' definitions).
        eager = [n for n in needles if n not in known]
        eager += sorted({n.encode() for n in eval_names})
        self.eager = tuple(eager)
        self._all = tuple(sorted(set(self.calls) | set(self.lazy)))
        self._set = frozenset(self._all)
        self.paths = frozenset(os.path.abspath(p) for p in paths)  # the viewed modules' files
        self._owners: dict[tuple[str, bytes], bool] = {}

    def verdict(self, data: bytes, path: str = "") -> tuple[int, frozenset[str]]:
        """EAGER, LAZY or NONE (known to hold no needle), and the lazily
        asked words ``data`` holds (whole words: a call, a loading use, a
        definition spells them so). A LAZY file may hold no needle at all:
        the index asks, when a view needs it, what it asked before
        (summary_from_disk with the needles)."""
        if any(n in data for n in self.eager):
            return EAGER, frozenset()
        held, anywhere = self._words(data)
        calls = [n for n in self.calls if n in held]
        if calls and (_STAR.search(data) or any(self._calls(data, n, path) for n in calls)):
            return EAGER, frozenset()
        if not anywhere and not any(b"." + a in data for a in self.attributes):
            return NONE, frozenset()  # no needle, not even inside a longer word
        attributes = [b"." + a for a in self.attributes if _spells_attribute(data, a)]
        return LAZY, frozenset(n.decode() for n in [*(n for n in self.lazy if n in held), *attributes])

    def _words(self, data: bytes) -> tuple[Collection[bytes], bool]:
        """The call and lazy words ``data`` holds as whole words, and whether
        it may hold one anywhere (inside a longer word too): one pass over
        its words when there are many (then not known: True), else one scan
        per word."""
        if len(self._all) > 64:
            return self._set.intersection(_RUN.findall(data)), True
        present = [n for n in self._all if n in data]
        return tuple(n for n in present if _has_word(data, n)), bool(present)

    def _calls(self, data: bytes, word: bytes, path: str) -> bool:
        """Some occurrence of ``word`` in ``data`` (the file at ``path``) may
        name a viewed module's function or class: an attribute, or an import
        but one relative import from a module that defines it itself (the
        ``from ..llama.modeling_llama import eager_attention_forward`` of
        transformers' modular files)."""
        for _, source in _uses(data, word):
            if source is None or not self._owned_elsewhere(path, source, word):
                return True
        return False

    def _owned_elsewhere(self, path: str, source: bytes, word: bytes) -> bool:
        """``from <source> import <word>`` in ``path`` binds the ``word``
        that another project module than the viewed ones defines itself:
        ``source`` relative, its file a module that defines ``word`` at
        column 0, spells it in no import or attribute and star-imports nothing."""
        target = _relative_file(path, source) if path else None
        if target is None or target in self.paths:
            return False
        key = (target, word)
        if key not in self._owners:
            text = read_bytes(target) or b""
            owns = re.search(rb"^(?:async[ \t]+)?(?:def|class)[ \t]+" + re.escape(word) + rb"\b", text, re.M)
            # Any import or attribute spelling it may bind another's: not owned.
            self._owners[key] = bool(owns) and next(_uses(text, word), None) is None and not _STAR.search(text)
        return self._owners[key]


def _occurrences(data: bytes, word: bytes) -> Iterator[tuple[int, int]]:
    """Where ``word`` stands as a whole word (bytes.find: a regex with
    look-arounds scans a large file ten times slower)."""
    start = data.find(word)
    while start != -1:
        end = start + len(word)
        if data[start - 1 : start] not in _WORD_BYTES and data[end : end + 1] not in _WORD_BYTES:
            yield start, end
        start = data.find(word, start + 1)


def _attribute_head(needle: bytes) -> bytes | None:
    """``.G`` of the attribute needle ``.G.eval(``; None for another needle."""
    found = _ATTRIBUTE_NEEDLE.match(needle)
    return found.group(0) if found is not None else None


def _spells_attribute(data: bytes, word: bytes) -> bool:
    """``data`` holds ``.word`` ending there (``solver.G.eval()``, ``f(solver.G)``)."""
    dotted = b"." + word
    start = data.find(dotted)
    while start != -1:
        if data[start + len(dotted) : start + len(dotted) + 1] not in _WORD_BYTES:
            return True
        start = data.find(dotted, start + 1)
    return False


def _has_word(data: bytes, word: bytes) -> bool:
    return next(_occurrences(data, word), None) is not None


def _relative_file(importer: str, source: bytes) -> str | None:
    """The file ``from <source> import ...`` in ``importer`` names, for a
    relative ``source`` (``..llama.modeling_llama``); None otherwise, or
    when no such file exists."""
    text = source.decode("ascii", "replace")
    dots = len(text) - len(text.lstrip("."))
    if not dots or not text[dots:]:
        return None  # absolute (sys.path decides), or ``from . import name`` (a module or a name)
    folder = os.path.dirname(os.path.abspath(importer))
    for _ in range(dots - 1):
        folder = os.path.dirname(folder)
    base = os.path.join(folder, *text[dots:].split("."))
    found = [c for c in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(c)]
    return found[0] if len(found) == 1 else None


def _uses(data: bytes, word: bytes) -> Iterator[tuple[int, bytes | None]]:
    """The occurrences of ``word`` that may name another module's function
    or class: (where, None) for an attribute or an import, (where, the
    module) for a ``from <module> import`` naming it."""
    spans: list[tuple[int, int, bytes | None]] | None = None
    for start, end in _occurrences(data, word):
        if data[start - 1 : start] == b"`" or data[end : end + 1] == b"`":
            continue  # a backtick is no Python 3 token: a docstring's or a comment's
        line = data[data.rfind(b"\n", 0, start) + 1 : start]
        if b"#" in line and b"'" not in line and b'"' not in line:
            continue  # a comment (``# Copied from ...modeling_bert.BertSelfOutput``)
        j = start - 1
        while j >= 0 and data[j] in _SPACE:
            j -= 1
        if j >= 0 and data[j] == ord("."):
            receiver = _RECEIVER.search(data, max(0, j - 64), j)
            if receiver is not None and receiver.group(1) in (b"self", b"cls"):
                before = data[receiver.start() - 1 : receiver.start()]
                if before != b"." and before not in _WORD_BYTES:
                    continue  # a method of the instance: never a module's name
            yield start, None
            continue
        if _DEFINES.search(line):
            continue  # its own definition
        if spans is None:
            spans = _import_spans(data)
        for s, e, source in spans:
            if s <= start < e:
                yield start, source
                break
        # A bare name no import binds: the module's own (no star import: verdict).


def _import_spans(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """From each ``import`` keyword to the end of its statement, or further:
    a parenthesised list ends at the first ``)`` on a line without ``#``
    (a comment may hold one), a plain one at the line's end, continued
    after a backslash; with the module of ``from <module> import`` when the
    statement starts its line. An ``import`` on a doctest line (``>>>``,
    ``...``: no Python statement starts so) is in a string."""
    spans = []
    for start, m_end in _occurrences(data, b"import"):
        if data[start - 1 : start] == b".":
            continue  # ``importlib.import`` is no statement
        head = data[data.rfind(b"\n", 0, start) + 1 : start]
        if head.lstrip().startswith((b">>>", b"...")):
            continue
        source = _FROM.fullmatch(head)
        k = m_end
        while k < len(data) and data[k] in b" \t":
            k += 1
        if data[k : k + 1] == b"(":
            close = data.find(b")", k)
            while close != -1 and b"#" in data[data.rfind(b"\n", 0, close) + 1 : close]:
                close = data.find(b")", close + 1)
            end = close if close != -1 else len(data)
        else:
            end = data.find(b"\n", k)
            while end != -1 and data[max(0, end - 2) : end].rstrip(b"\r").endswith(b"\\"):
                end = data.find(b"\n", end + 1)
            end = end if end != -1 else len(data)
        spans.append((start, end, source.group(1) if source is not None else None))
    return spans
