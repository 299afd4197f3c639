"""The analysis budget per file: a file over it is reported by name and the
run goes on (CLI, flake8 plugin), with the exit status of an unlintable file."""

import importlib.util
from pathlib import Path

import pytest

from memlint.frontends.flake8_plugin import Flake8Checker
from memlint.lint.engine import lint
from memlint.parse import budget
from memlint.parse.budget import BudgetExceeded, file_budget, tick
from memlint.rule.registry import select_rules

_spec = importlib.util.spec_from_file_location(
    "linear_growth", Path(__file__).resolve().parent.parent / "bench" / "linear_growth.py"
)
linear_growth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(linear_growth)

LONG = linear_growth.function_body(300)  # a few hundred thousand ticks: far over a 1 ns budget
LEAKY = "import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n    total += loss\n"
TINY = {"MEMLINT_ANALYSIS_BUDGET": "0.000000001"}


def spin(n):
    for _ in range(n):
        tick()


def test_ticks_past_the_deadline_raise_naming_the_file():
    with pytest.raises(BudgetExceeded) as exc:
        with file_budget("long.py", 1e-9):
            spin(10_000)
    assert str(exc.value).startswith("long.py: not checked")
    assert "MEMLINT_ANALYSIS_BUDGET" in exc.value.reason and "long.py" not in exc.value.reason


def test_no_budget_outside_a_file_and_when_turned_off(monkeypatch):
    spin(10_000)  # no file being analysed: nothing to stop
    monkeypatch.setenv("MEMLINT_ANALYSIS_BUDGET", "0")
    assert budget.budget_seconds() is None
    with file_budget("long.py"):
        spin(10_000)


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.delenv("MEMLINT_ANALYSIS_BUDGET", raising=False)
    assert budget.budget_seconds() == budget.DEFAULT_SECONDS
    monkeypatch.setenv("MEMLINT_ANALYSIS_BUDGET", "2.5")
    assert budget.budget_seconds() == 2.5
    monkeypatch.setenv("MEMLINT_ANALYSIS_BUDGET", "soon")
    assert budget.budget_seconds() == budget.DEFAULT_SECONDS


def test_a_nested_budget_keeps_the_tighter_deadline():
    with pytest.raises(BudgetExceeded) as exc:
        with file_budget("outer.py", 1e-9):
            with file_budget("inner.py", 3600):
                spin(10_000)
    assert exc.value.path == "outer.py"


def test_engine_stops_a_file_over_budget(monkeypatch):
    rules = select_rules(None, [], [])
    monkeypatch.setenv("MEMLINT_ANALYSIS_BUDGET", TINY["MEMLINT_ANALYSIS_BUDGET"])
    with pytest.raises(BudgetExceeded, match="^long.py: not checked"):
        lint(LONG, "long.py", rules)
    monkeypatch.delenv("MEMLINT_ANALYSIS_BUDGET")
    assert lint(LONG, "long.py", rules)[0]  # within the default budget it is checked


def test_cli_reports_the_file_and_goes_on(tmp_path, run_memlint):
    (tmp_path / "long.py").write_text(LONG)
    (tmp_path / "leaky.py").write_text(LEAKY)
    proc = run_memlint("check", ".", env=TINY)
    assert "memlint: error: long.py: not checked: the analysis ran over its budget" in proc.stderr.replace("./", "")
    assert "1 file could not be checked" in proc.stderr
    assert proc.returncode == 1  # as for a file that does not parse
    # Not cached as the file's answer: with the default budget it is checked.
    again = run_memlint("check", ".")
    assert "long.py:" in again.stdout and "error" not in again.stderr


def test_cli_exit_status_matches_a_syntax_error(tmp_path, run_memlint):
    (tmp_path / "bad.py").write_text("import torch\nfor x in y:\ntorch.cuda.empty_cache()\n")
    assert run_memlint("check", "bad.py").returncode == 1


def test_flake8_plugin_reports_mem000_naming_the_file(monkeypatch):
    monkeypatch.setenv("MEMLINT_ANALYSIS_BUDGET", TINY["MEMLINT_ANALYSIS_BUDGET"])
    results = list(Flake8Checker(None, LONG.splitlines(keepends=True), "long.py").run())
    assert [(line, col) for line, col, _, _ in results] == [(1, 0)]
    assert results[0][2].startswith("MEM000 memlint: long.py: not checked")
