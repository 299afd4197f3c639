"""Attack the engine: generated programs, and every rule example mutated.

Generated programs (hypothesmith, grammar- and CST-based), each spliced with a
rule example and a comment naming every rule's pre-filter tokens so that every
rule runs over it, go through lint and `fix --unsafe-fixes`: nothing raises,
the fixed text compiles, fixing again changes nothing.

Every embedded example of every rule is then mutated in ways that must not
matter (comment and blank lines, trailing comments, non-ASCII text, very long
lines, odd spacing, tabs, CRLF, nesting in functions and classes,
decorators): invalid examples still raise the same findings and fix to the
same code, with every comment line kept; valid ones stay silent. A sample of
the fixture scripts (fixtures/, tests/corpus/) goes through the layout-only
mutations with every rule. New rules and examples are picked up from the
registry, so this grows with every rule.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import os
import tempfile
import textwrap
import tokenize
import warnings

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from memlint.fix.fixer import fix_text
from memlint.frontends import cli
from memlint.lint.engine import ParseError, lint_text
from memlint.rule.registry import all_rules

# hypothesmith compiles what it generates; its code's warnings are not ours.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

RULES = all_rules()
SEEDS = sorted({ex.source for rule in RULES for ex in (*rule.invalid, *rule.valid)})
# A comment holding every rule's pre-filter tokens: no rule is skipped.
ALL_TOKENS = "# " + " ".join(sorted({tok for rule in RULES for tok in rule.tokens})) + "\n"


def fuzz(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


PLACES = st.sampled_from(["before", "after", "inside"])


def _splice(program: str, seed: str, place: str) -> str:
    """The program before or after the seed, or at the top of its first loop's
    body (where most rules look)."""
    program = program if program.endswith("\n") or not program else program + "\n"
    if place == "inside":
        loops = [n for n in ast.walk(ast.parse(seed)) if isinstance(n, (ast.For, ast.While))]
        if loops:
            first = loops[0].body[0]
            lines = seed.splitlines(keepends=True)
            block = textwrap.indent(program, " " * first.col_offset)
            text = "".join(lines[: first.lineno - 1]) + block + "".join(lines[first.lineno - 1 :])
            return text + ALL_TOKENS
    text = program + seed if place == "before" else seed + program
    return text + ALL_TOKENS


def _attack(text: str) -> None:
    """What must hold for any program: no exception, fixed text compiles,
    a second fix is a no-op."""
    try:
        lint_text(text, "fuzz.py", RULES)
    except ParseError as exc:  # valid Python libcst cannot read: reported, not a crash
        note(f"libcst refused: {exc}")
        return
    result = fix_text(text, "fuzz.py", RULES, unsafe=True)
    assert _compiles(result.text), result.text
    again = fix_text(result.text, "fuzz.py", RULES, unsafe=True)
    assert again.text == result.text, "a second fix changed the text"
    assert not again.applied


@fuzz(150)
@given(program=hypothesmith.from_grammar(), seed=st.sampled_from(SEEDS), place=PLACES)
def test_grammar_generated_programs(program, seed, place):
    text = _splice(program, seed, place)
    assume(_compiles(text))
    _attack(text)


@fuzz(40)
@given(program=hypothesmith.from_node(cst.Module), seed=st.sampled_from(SEEDS), place=PLACES)
def test_cst_generated_programs(program, seed, place):
    text = _splice(program, seed, place)
    assume(_compiles(text))
    _attack(text)


@fuzz(20)
@given(program=hypothesmith.from_grammar(), seed=st.sampled_from(SEEDS), place=PLACES)
def test_generated_programs_through_the_command(program, seed, place):
    """The same, through `memlint check` and `check --fix --unsafe-fixes` on a file."""
    text = _splice(program, seed, place)
    assume(_compiles(text))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fuzz.py")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        outputs = []
        for args in (["check"], ["check", "--fix", "--unsafe-fixes"], ["check", "--fix", "--unsafe-fixes"]):
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = cli.main([*args, "--no-cache", "--select", "ALL", "-j", "1", path])
            assert code in (0, 1), err.getvalue()
            assert "internal error" not in err.getvalue(), err.getvalue()
            with open(path, encoding="utf-8", newline="") as fh:
                outputs.append(fh.read())
        assert outputs[0] == text, "check alone wrote the file"
        assert _compiles(outputs[1]), outputs[1]
        assert outputs[2] == outputs[1], "a second --fix changed the file"


# -- mutations of the embedded examples ------------------------------------------
#
# Each takes a source and returns the mutated source (None: does not apply).
# `exact` mutations must commute with fixing byte for byte; the others are
# compared as syntax trees (comments and layout differ by design).


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _logical_starts(text: str) -> list[tuple[int, int]]:
    """(line, column) of the first token of every logical line."""
    starts, at_start = [], True
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    for tok in _tokens(text):
        if tok.type == tokenize.NEWLINE:
            at_start = True
        elif tok.type == tokenize.ENDMARKER:
            break
        elif tok.type not in skip and at_start:
            starts.append(tok.start)
            at_start = False
    return starts


def _insert(text: str, inserts: list[tuple[int, int, str]]) -> str:
    """Insert strings at (line, column) positions, right to left."""
    lines = text.splitlines(keepends=True)
    for line, col, s in sorted(inserts, reverse=True):
        lines[line - 1] = lines[line - 1][:col] + s + lines[line - 1][col:]
    return "".join(lines)


def comment_lines(text: str) -> str:
    """A blank line and a non-ASCII comment line above every logical line."""
    lines = text.splitlines(keepends=True)
    inserts = []
    for k, (line, col) in enumerate(_logical_starts(text)):
        indent = lines[line - 1][:col]
        inserts.append((line, 0, f"\n{indent}# fuzz-line {k}: ünïcödé 日本語 🚀\n"))
    return _insert(text, inserts)


def _line_ends(text: str) -> list[tuple[int, int]]:
    ends, commented = [], set()
    for tok in _tokens(text):
        if tok.type == tokenize.COMMENT:
            commented.add(tok.start[0])
        if tok.type == tokenize.NEWLINE and tok.start[0] not in commented:
            ends.append(tok.start)
    return ends


def trailing_comments(text: str) -> str:
    """A non-ASCII comment at the end of every logical line."""
    return _insert(text, [(line, col, f"  # ñ {k} 🚀") for k, (line, col) in enumerate(_line_ends(text))])


def long_lines(text: str) -> str:
    """A 20,000-character comment on top and 3,000-character ones on every line."""
    body = _insert(text, [(line, col, "  # " + "L" * 3000) for line, col in _line_ends(text)])
    return "# " + "x" * 20_000 + "\n" + body


def odd_spacing(text: str) -> str:
    """Legal but unusual spacing inside lines: `f ( a , b )`, `torch . cuda`."""
    inserts, fstring = [], 0
    first_on_line: set[tuple[int, int]] = set()
    seen_lines: set[int] = set()
    toks = _tokens(text)
    layout = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    for tok in toks:
        if tok.type not in layout and tok.start[0] not in seen_lines:
            seen_lines.add(tok.start[0])
            first_on_line.add(tok.start)
    for tok in toks:
        kind = tok.type
        if kind == getattr(tokenize, "FSTRING_START", -1):
            fstring += 1
        elif kind == getattr(tokenize, "FSTRING_END", -1):
            fstring -= 1
        if fstring or kind != tokenize.OP:
            continue
        if tok.string in ("(", "[", "{", ".", ")", "]", "}", ",") and tok.start not in first_on_line:
            inserts.append((*tok.start, " "))
        if tok.string in ("(", "[", "{", ".", ","):
            inserts.append((*tok.end, " "))
    return _insert(text, inserts)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def tabs(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        n = len(line) - len(stripped)
        out.append("\t" * (n // 4) + " " * (n % 4) + stripped)
    return "".join(out)


def _split_header(text: str) -> tuple[str, str]:
    """(docstring, __future__ and imports at the top; the rest)."""
    tree = ast.parse(text)
    end = 0
    for i, stmt in enumerate(tree.body):
        docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if docstring or isinstance(stmt, (ast.Import, ast.ImportFrom)):
            end = stmt.end_lineno or end
        else:
            break
    lines = text.splitlines(keepends=True)
    return "".join(lines[:end]), "".join(lines[end:])


def non_ascii_names(text: str) -> str:
    """Non-ASCII identifiers and strings between the imports and the code."""
    head, rest = _split_header(text)
    return head + 'ñame_变量 = "é 🚀"\nclass Ünïcode_类:\n    ß = ñame_变量\n' + rest


def _nest(text: str, opener: str, depth: int) -> str | None:
    head, rest = _split_header(text)
    if not rest.strip():
        return None
    nested = head + opener + textwrap.indent(rest, "    " * depth)
    return nested if _compiles(nested) else None  # e.g. `from m import *` at module level only


def nested_in_function(text: str) -> str | None:
    return _nest(text, "def _fuzz_outer(loader, model):\n", 1)


def nested_in_decorated_method(text: str) -> str | None:
    opener = (
        "class _FuzzOuter:\n    @staticmethod\n    @_fuzz.register(name='x')\n    def _fuzz_method(loader, model):\n"
    )
    return _nest(text, opener, 2)


def decorated_defs(text: str) -> str | None:
    """An extra decorator on every function and class."""
    tree = ast.parse(text)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if not defs:
        return None
    lines = text.splitlines(keepends=True)
    inserts = [(n.lineno, 0, " " * n.col_offset + "@_fuzz_decorator(1)\n") for n in defs]
    assert all(lines[n.lineno - 1][n.col_offset :].startswith(("def", "async", "class")) for n in defs)
    return _insert(text, inserts)


EXACT = {"crlf": crlf, "tabs": tabs}
TREE = {
    "comment_lines": comment_lines,
    "trailing_comments": trailing_comments,
    "long_lines": long_lines,
    "odd_spacing": odd_spacing,
    "non_ascii_names": non_ascii_names,
    "nested_in_function": nested_in_function,
    "nested_in_decorated_method": nested_in_decorated_method,
    "decorated_defs": decorated_defs,
}
MUTATIONS = {**EXACT, **TREE}
MAY_SILENCE = {"decorated_defs", "nested_in_decorated_method"}

# Known gaps, reported to the rules' owners: (code, example digest, mutation).
# An example is named by the digest of its source (``example_digest``), not
# by its place in the rule's lists, which shifts whenever an example is
# inserted before it; editing the example's text changes its digest, and
# test_known_gaps_name_existing_examples then prints the new ones.
KNOWN_GAPS: dict[tuple[str, str, str], str] = {
    # a Valid example: a registry factory read only at module level
    ("MEM701", "321e944c45", "nested_in_function"): (
        "a registry factory is read only over a module-level registry (project/class_factories.py):"
        " nested in a function, MODELS and load_model are locals and the load stays reported"
    ),
    ("MEM701", "321e944c45", "nested_in_decorated_method"): "the same registry, local to a method",
    ("MEM701", "321e944c45", "decorated_defs"): (
        "an unknown decorator on the factory may return anything: the registry factory is not trusted"
    ),
    # Valid examples (s30 fac23): a module function returning a tensor is read
    # at module level or beside the class in its function (forward_copies.tensor_functions);
    # one under a decorator of its own is not.
    ("MEM701", "4e50f4e7ad", "decorated_defs"): (
        "an unknown decorator on future_mask may return anything: its `.to(d)` is not known to move a copy"
    ),
    ("MEM701", "6667e2f294", "decorated_defs"): "an unknown decorator on future_mask, as 4e50f4e7ad",
    # A grad-off decorator of the project's own is read at module level only
    # (project/off_decorators.py, analysis/autograd/off_decorators.py): one
    # defined inside a function is not trusted, so the function it decorates
    # is judged with grad on.
    ("MEM202", "cfbaba860c", "nested_in_function"): "a grad-off decorator factory local to a function is not read",
    ("MEM102", "01ba678fcf", "nested_in_function"): "a grad-off decorator factory local to a function is not read",
    ("MEM102", "01ba678fcf", "nested_in_decorated_method"): "the same factory, local to a method",
    ("MEM202", "120a87be45", "nested_in_function"): (
        "training targets made by a helper are read for module-level helpers only (target_passes.py)"
    ),
    ("MEM202", "120a87be45", "nested_in_decorated_method"): "the same helper, nested in a method",
    ("MEM201", "cd495bbdea", "decorated_defs"): (
        "an unknown decorator on forward may change what it runs: its eval branch is not read as grad-off"
    ),
    ("MEM201", "389184aac8", "nested_in_function"): "a grad-off decorator factory local to a function is not read",
    ("MEM201", "389184aac8", "nested_in_decorated_method"): "the same factory, local to a method",
    ("MEM201", "ca00e95b62", "nested_in_function"): "a grad-off decorator bound in a function is not read",
    ("MEM201", "ca00e95b62", "nested_in_decorated_method"): "the same decorator, local to a method",
    ("MEM201", "9c267f9cfa", "nested_in_function"): "a no_grad wrapper decorator local to a function is not read",
    ("MEM201", "9c267f9cfa", "nested_in_decorated_method"): "the same wrapper decorator, local to a method",
    # construction_order.py: a decorated method may do anything, so a call of
    # it in ``__init__`` ends "self is still on the CPU" (pSp's loader).
    ("MEM701", "2447d12a62", "decorated_defs"): "an unknown decorator on a method `__init__` calls: the CPU start ends",
    # class_moves.py: a method returning a fresh tensor is trusted only undecorated.
    (
        "MEM701",
        "a7e3b3649f",
        "decorated_defs",
    ): "a decorated `get_batch` may return a part of the module: the class may move",
    # An eval-off forward (project/eval_forwards.py) is read undecorated only:
    # an unknown decorator may return anything.
    (
        "MEM101",
        "4c855b3c17",
        "decorated_defs",
    ): "an unknown decorator on `forward`: its eval-mode returns are not trusted",
    # A tensor function (project/forward_copies.py) under a decorator of its own is not read.
    ("MEM701", "492b1fa6fa", "decorated_defs"): "an unknown decorator on the helper may return anything",
}


def example_digest(example) -> str:
    """The stable name of an embedded example: the start of its source's SHA-256."""
    return hashlib.sha256(example.source.encode("utf-8")).hexdigest()[:10]


INVALID = [
    pytest.param(rule, i, ex, id=f"{rule.code}-invalid-{i}") for rule in RULES for i, ex in enumerate(rule.invalid)
]
VALID = [pytest.param(rule, i, ex, id=f"{rule.code}-valid-{i}") for rule in RULES for i, ex in enumerate(rule.valid)]


def _each_mutation(rule, index, example, check) -> None:
    """Run ``check`` for every mutation; one report lists every failure, and
    every known gap that no longer fails (its entry must go)."""
    failures = []
    digest = example_digest(example)
    for name, mutate in MUTATIONS.items():
        source = mutate(example.source)
        if source is None:
            continue
        known = (rule.code, digest, name) in KNOWN_GAPS
        try:
            assert _compiles(source), f"the mutation itself broke the code:\n{source}"
            check(rule, example, name, source)
        except AssertionError as exc:
            if not known:
                failures.append(f"--- mutation {name} ---\n{exc}\n--- mutated source ---\n{source}")
        else:
            if known:
                failures.append(
                    f"--- mutation {name} ---\nthe known gap {(rule.code, digest, name)!r} no longer exists:"
                    " the example now passes; remove its entry from KNOWN_GAPS"
                )
    assert not failures, "\n\n".join(failures)


def test_known_gaps_name_existing_examples():
    examples = {(rule.code, example_digest(ex)) for rule in RULES for ex in (*rule.invalid, *rule.valid)}
    stale = sorted(key for key in KNOWN_GAPS if key[:2] not in examples)
    hints = sorted(
        {
            f"{rule.code} {kind}[{i}] {example_digest(ex)}: {ex.source.strip().splitlines()[-1].strip()[:60]}"
            for code, _, _ in stale
            for rule in RULES
            if rule.code == code
            for kind, examples_of in (("invalid", rule.invalid), ("valid", rule.valid))
            for i, ex in enumerate(examples_of)
        }
    )
    assert not stale, (
        f"KNOWN_GAPS entries name no example of their rule (its text changed?): {stale}; "
        "the rule's examples now are:\n" + "\n".join(hints)
    )
    assert all(mutation in MUTATIONS for _, _, mutation in KNOWN_GAPS)


class _SortDecorators(ast.NodeTransformer):
    """A fix may add its decorator above or below the fuzz one: same code."""

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.decorator_list.sort(key=ast.dump)
        return node


def _tree(text: str) -> str:
    return ast.dump(_SortDecorators().visit(ast.parse(text)))


def _found_and_fixed_the_same(rule, example, mutation: str, source: str) -> None:
    codes = [f.code for f in lint_text(source, "example.py", [rule])]
    if not codes and mutation in MAY_SILENCE:
        # An unknown decorator may change what the function does (run it
        # under no_grad, say): staying silent is the precise answer.
        assert fix_text(source, "example.py", [rule], unsafe=True).text == source
        return
    assert codes == [rule.code] * example.count
    result = fix_text(source, "example.py", [rule], unsafe=True)
    assert _compiles(result.text), result.text
    assert fix_text(result.text, "example.py", [rule], unsafe=True).text == result.text, "second fix changed it"
    if example.fixed is None:
        assert result.text == source
        return
    expected = MUTATIONS[mutation](example.fixed)
    if mutation in EXACT:
        assert result.text == expected
    else:
        assert expected is not None
        assert _tree(result.text) == _tree(expected), result.text
    if mutation == "comment_lines":
        assert result.text.count("# fuzz-line") == source.count("# fuzz-line"), "a comment line was lost"


def _silent(rule, example, mutation: str, source: str) -> None:
    assert lint_text(source, "example.py", [rule]) == []


@pytest.mark.parametrize("rule, index, example", INVALID)
def test_mutated_invalid_example_is_found_and_fixed_the_same(rule, index, example):
    _each_mutation(rule, index, example, _found_and_fixed_the_same)


@pytest.mark.parametrize("rule, index, example", VALID)
def test_mutated_valid_example_stays_silent(rule, index, example):
    _each_mutation(rule, index, example, _silent)


# -- mutations of the fixture scripts ---------------------------------------------
#
# Whole training scripts (fixtures/, tests/corpus/) under the mutations that
# only change layout: every rule, same findings, same fixes.

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUT = ("crlf", "tabs", "comment_lines", "trailing_comments", "odd_spacing")


def _fixture_files() -> list[str]:
    found = []
    for folder in ("fixtures", os.path.join("tests", "corpus")):
        for path, _, files in os.walk(os.path.join(ROOT, folder)):
            found += [os.path.join(path, f) for f in files if f.endswith(".py") and not f.endswith("_fixed.py")]
    found.sort()
    return found[:: max(1, len(found) // 24)]  # an even sample keeps CI fast


def _codes(text: str) -> list[str]:
    return sorted(f.code for f in lint_text(text, "script.py", RULES))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_mutated_fixture_scripts_give_the_same_findings_and_fixes(path):
    with open(path, encoding="utf-8") as fh:
        original = fh.read()
    codes = _codes(original)
    fixed = fix_text(original, "script.py", RULES, unsafe=True).text if codes else original
    failures = []
    gaps = {(code, mutation) for code, _, mutation in KNOWN_GAPS}
    for name in LAYOUT:
        if any((code, name) in gaps for code in codes):
            continue
        mutate = MUTATIONS[name]
        source = mutate(original)
        try:
            assert _compiles(source)
            assert _codes(source) == codes
            if not codes:
                continue
            result = fix_text(source, "script.py", RULES, unsafe=True).text
            if name in EXACT:
                assert result == mutate(fixed)
            else:
                assert _tree(result) == _tree(fixed)
            if name == "comment_lines":
                assert result.count("# fuzz-line") == source.count("# fuzz-line"), "a comment line was lost"
        except AssertionError as exc:
            failures.append(f"--- mutation {name} ---\n{exc}")
    assert not failures, "\n\n".join(failures)
