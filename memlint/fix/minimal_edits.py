"""A fix as the smallest replacements that turn the old text into the new.

``text_edit`` (fixer.py) gives one span from a fix's first change to its
last: right for applying fixes in rounds, wrong for a report. Two findings
whose fixes touch the same region (a loop wrapped in ``with
torch.no_grad():``, re-indenting every line, and an accumulation inside it
given ``.detach()``) would report overlapping spans, which a SARIF consumer,
an editor (LSP ``TextEdit``s) or ``ruff``-style appliers cannot apply
together. Here the changed span is compared line by line (lines matched by their text after the indent), and
each changed line keeps only the characters that differ, so a re-indent is
an insertion at each line's start and leaves the rest of the line to other
fixes.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from memlint.lint.finding import Edit


def minimal_edits(old: str, new: str) -> list[Edit]:
    """Non-overlapping edits, in order, whose application (each against
    ``old``) gives ``new``; empty when the texts are equal."""
    if old == new:
        return []
    # Work on whole lines around the changed span: the common head and
    # tail (cheap, linear) leave only the lines a fix touched to compare.
    head = _common_prefix(old, new)
    head = old.rfind("\n", 0, head) + 1
    tail = _common_suffix(old[head:], new[head:])
    old_end, new_end = len(old) - tail, len(new) - tail
    if old_end > head and old[old_end - 1] != "\n":  # to the end of the last changed line
        nl = old.find("\n", old_end)
        grow = (len(old) if nl == -1 else nl + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    old_lines = old[head:old_end].splitlines(keepends=True)
    new_lines = new[head:new_end].splitlines(keepends=True)
    edits: list[Edit] = []
    offsets = _offsets(old_lines, head)
    # Lines are matched by what they say, not how deep they sit: a block
    # moved under a new ``with`` is the same lines, each one indented.
    matcher = SequenceMatcher(None, _stripped(old_lines), _stripped(new_lines), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            # Line for line (a re-indent, a changed call): one edit per line.
            for k in range(i2 - i1):
                edits += _trimmed(old_lines[i1 + k], new_lines[j1 + k], offsets[i1 + k])
        else:
            edits += _trimmed("".join(old_lines[i1:i2]), "".join(new_lines[j1:j2]), offsets[i1])
    return _untied(edits)


def _untied(edits: list[Edit]) -> list[Edit]:
    """An insertion where the next edit starts (a line added above a line
    that changes) joins it: two edits at one offset leave their order to
    whoever applies them."""
    out: list[Edit] = []
    for e in edits:
        last = out[-1] if out else None
        if last is not None and last.start == last.end == e.start:
            out[-1] = Edit(last.start, e.end, last.content + e.content)
        else:
            out.append(e)
    return out


def _stripped(lines: list[str]) -> list[str]:
    return [line.lstrip(" \t") for line in lines]


def _trimmed(old: str, new: str, at: int) -> list[Edit]:
    """The one edit of ``old`` (at offset ``at``) into ``new``, without the
    characters both share at either end; none when they are equal."""
    if old == new:
        return []
    start = _common_prefix(old, new)
    end = _common_suffix(old[start:], new[start:])
    return [Edit(at + start, at + len(old) - end, new[start : len(new) - end])]


def _offsets(lines: list[str], start: int) -> list[int]:
    out = []
    for line in lines:
        out.append(start)
        start += len(line)
    out.append(start)
    return out


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    i = 0
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    i = 0
    while i < limit and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def line_shifts(old: str, new: str) -> list[tuple[int, int]]:
    """Where ``new``'s lines moved from ``old``'s: (first line of ``new``
    moved, by how many lines it and the lines after it moved), in order."""
    out: list[tuple[int, int]] = []
    delta = 0
    line = 1
    at = 0
    for e in minimal_edits(old, new):
        added = e.content.count("\n") - old.count("\n", e.start, e.end)
        if not added:
            continue
        line += old.count("\n", at, e.end)
        at = e.end
        delta += added
        out.append((line + delta, delta))
    return out


def back_line(line: int, shifts: list[tuple[int, int]]) -> int:
    """The line of the old text that ``line`` of the new one was (a line a
    fix added: the line it was added above)."""
    moved = 0
    for first, delta in shifts:
        if line < first:
            break
        moved = delta
    return line - moved
