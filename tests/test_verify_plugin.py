"""The pytest plugin: off unless asked, skips without CUDA, fails a test whose
verified fix does not hold up."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

VERIFY = Path(__file__).resolve().parent.parent / "fixtures" / "verify"
LEAKY = VERIFY / "mem101_epoch_loss.py"
FIXED = VERIFY / "mem101_epoch_loss_fixed.py"


def test_marked_tests_are_skipped_without_the_option_and_nothing_heavy_is_imported(pytester):
    pytester.makepyfile(
        f"""
        import sys
        import pytest

        @pytest.mark.memlint_verify({str(LEAKY)!r}, fixed={str(FIXED)!r})
        def test_marked():
            raise AssertionError("must not run")

        def test_fixture(memlint_verify):
            memlint_verify({str(LEAKY)!r})

        def test_imports():
            assert "torch" not in sys.modules
            assert "memlint.verify.cli" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*memlint verify: pass --memlint-verify to run*"])


def test_cuda_is_required_by_default_and_its_absence_skips(pytester, monkeypatch):
    # (and a misspelt marker option is an error, not a silent default)
    from memlint.verify import cli

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setattr(cli, "_CUDA", None)
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.memlint_verify({str(LEAKY)!r})
        def test_marked():
            raise AssertionError("must not run")

        def test_fixture(memlint_verify):
            memlint_verify({str(LEAKY)!r})
            raise AssertionError("must not run")

        @pytest.mark.memlint_verify({str(LEAKY)!r}, stpes=10)
        def test_typo():
            pass
        """
    )
    result = pytester.runpytest("--memlint-verify", "-rs")
    result.assert_outcomes(skipped=2, errors=1)
    result.stdout.fnmatch_lines(["*memlint verify: no CUDA device*"])
    result.stdout.fnmatch_lines(["*memlint_verify: unknown option(s) stpes*"])


def test_a_fix_that_holds_passes_and_one_that_does_not_fails(pytester):
    pytest.importorskip("torch")
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.memlint_verify({str(LEAKY)!r}, fixed={str(FIXED)!r}, steps=10)
        def test_holds(memlint_verify_outcome):
            assert memlint_verify_outcome.memory == "dropped"
            assert memlint_verify_outcome.results == "identical"

        @pytest.mark.memlint_verify({str(FIXED)!r}, fixed={str(LEAKY)!r}, steps=10)
        def test_does_not_hold():
            raise AssertionError("the body runs only when the fix held up")
        """
    )
    result = pytester.runpytest("--memlint-verify", "--memlint-verify-device=cpu")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*memlint verify: the fix did not hold up*",
            "*graph nodes*increased: started growing*",
            "*FAILED memory increased, results identical: the fix did not hold up*",
        ]
    )
    assert "the body runs only" not in result.stdout.str()


def test_inner_pytest_runs_configure_without_deprecation_warnings(pytester):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-W", "error::pytest.PytestDeprecationWarning")
    result.assert_outcomes(passed=1)
    assert "PytestDeprecationWarning" not in result.stdout.str()
