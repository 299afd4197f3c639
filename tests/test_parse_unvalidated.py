"""libcst's parse without node validation (memlint/parse/unvalidated.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from memlint.lint.engine import ParseError, parse_module
from memlint.parse.unvalidated import parse_unvalidated

# LibCST issue #1061: valid Python that libcst's validation rejects.
REJECTED_BY_VALIDATION = "x = () if 0 else(lambda:())\n"
_ROOT = Path(__file__).resolve().parent.parent


def test_validation_rejects_the_sample_in_this_libcst():
    # If libcst fixes its validation, this sample no longer shows the difference.
    with pytest.raises(TypeError):  # what its validation raises for it (libcst 1.9)
        cst.parse_module(REJECTED_BY_VALIDATION)


def test_valid_python_that_validation_rejects_now_parses():
    module = parse_module(REJECTED_BY_VALIDATION)
    assert module.code == REJECTED_BY_VALIDATION


def test_validation_is_back_after_the_parse():
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.While(test=cst.Name("x"), body=cst.IndentedBlock([]), whitespace_after_while=cst.SimpleWhitespace(""))


def test_validation_is_back_after_a_failed_parse():
    with pytest.raises(ParseError):
        parse_module("def f(:\n")
    with pytest.raises(ParseError):
        parse_module("x = )\n")
    with pytest.raises(cst.CSTValidationError):
        cst.While(test=cst.Name("x"), body=cst.IndentedBlock([]), whitespace_after_while=cst.SimpleWhitespace(""))


def test_text_python_rejects_is_parsed_with_validation(monkeypatch):
    # Only text the ast parser accepted skips validation.
    calls = []
    monkeypatch.setattr("memlint.lint.engine.parse_unvalidated", lambda text: calls.append(text))
    with pytest.raises(ParseError):
        parse_module("x = (\n")
    assert calls == []
    parse_module("x = 1\n")
    assert calls == ["x = 1\n"]


def test_same_tree_as_a_validated_parse():
    for path in sorted((_ROOT / "memlint").rglob("*.py"))[:40] + sorted((_ROOT / "tests" / "corpus").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert parse_unvalidated(text).deep_equals(cst.parse_module(text)), path


def test_threads_leave_validation_on():
    text = (_ROOT / "memlint" / "lint" / "engine.py").read_text(encoding="utf-8")
    errors: list[BaseException] = []

    def parse_many() -> None:
        try:
            for _ in range(5):
                parse_unvalidated(text)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=parse_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with pytest.raises(cst.CSTValidationError):
        cst.While(test=cst.Name("x"), body=cst.IndentedBlock([]), whitespace_after_while=cst.SimpleWhitespace(""))
