"""pytest plugin (entry point ``pytest11``): verify memlint's fixes in CI.

Loaded by every pytest run where memlint is installed, so it imports nothing
beyond pytest until a test asks for it.

- ``@pytest.mark.memlint_verify("train.py", steps=20, device="cuda", ...)``:
  before the test body runs, the plugin runs ``memlint verify`` on the script
  (keywords: ``fixed``, ``steps``, ``device``, ``select``, ``unsafe_fixes``,
  ``timeout``, ``args``, ``simulate``, ``nproc_per_node``, ``launcher_args``) and fails the test with the report when
  the fix does not hold up. The test body can read the outcome from the
  ``memlint_verify_outcome`` fixture.
- the ``memlint_verify`` fixture: ``outcome = memlint_verify("train.py", ...)``,
  same keywords, fails the test when the fix does not hold up (``check=False``
  returns the outcome whatever it is).

Both run only under ``pytest --memlint-verify`` (the GPU job); otherwise the
test is skipped, so a laptop's test run spends nothing on it. The device is
``cuda`` unless the marker, the call or ``--memlint-verify-device`` says
otherwise, and a test that needs CUDA where there is none is skipped.
"""

from __future__ import annotations

import pytest

DEFAULT_DEVICE = "cuda"
DEFAULT_STEPS = 20
_KEYWORDS = {
    "fixed",
    "steps",
    "device",
    "select",
    "unsafe_fixes",
    "timeout",
    "args",
    "simulate",
    "nproc_per_node",
    "launcher_args",
}


def pytest_addoption(parser):
    group = parser.getgroup("memlint")
    group.addoption(
        "--memlint-verify",
        action="store_true",
        default=False,
        help="run memlint verify on tests marked memlint_verify (and the memlint_verify fixture)",
    )
    group.addoption(
        "--memlint-verify-device",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="device for memlint verify, overriding markers (default: the marker's, else cuda)",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "memlint_verify(script, **options): verify that memlint's fix of SCRIPT holds")


def pytest_report_header(config):
    if config.getoption("--memlint-verify"):
        device = config.getoption("--memlint-verify-device") or f"marker's, else {DEFAULT_DEVICE}"
        return f"memlint verify: on (device: {device})"
    return None


def _check_keywords(kwargs) -> None:
    unknown = set(kwargs) - _KEYWORDS
    if unknown:
        pytest.fail(f"memlint_verify: unknown option(s) {', '.join(sorted(unknown))}", pytrace=False)


def _options(config, script, kwargs):
    _check_keywords(kwargs)
    if not config.getoption("--memlint-verify"):
        pytest.skip("memlint verify: pass --memlint-verify to run")
    from memlint.verify.cli import Options

    device = config.getoption("--memlint-verify-device") or kwargs.get("device") or DEFAULT_DEVICE
    select = kwargs.get("select")
    if isinstance(select, str):
        select = [c.strip() for c in select.split(",") if c.strip()]
    return Options(
        script=str(script),
        fixed=str(kwargs["fixed"]) if kwargs.get("fixed") else None,
        select=select,
        unsafe_fixes=bool(kwargs.get("unsafe_fixes", False)),
        steps=int(kwargs.get("steps", DEFAULT_STEPS)),
        device=device,
        timeout=float(kwargs.get("timeout", 600.0)),
        simulate=bool(kwargs.get("simulate", False)),
        args=tuple(str(a) for a in kwargs.get("args", ())),
        nproc_per_node=int(kwargs.get("nproc_per_node", 0)),
        launcher_args=tuple(str(a) for a in kwargs.get("launcher_args", ())),
    )


def _skip_unless_runnable(options) -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("memlint verify: torch is not installed")
    if options.device == "cuda" and not options.simulate:
        from memlint.verify.cli import cuda_available

        if not cuda_available():
            pytest.skip("memlint verify: no CUDA device")


def _run(options):
    from memlint.verify.cli import UsageError, verify

    try:
        return verify(options)
    except UsageError as exc:
        pytest.fail(f"memlint verify: {exc}", pytrace=False)


def _fail_unless_ok(outcome) -> None:
    if not outcome.ok:
        from memlint.verify.report import render_human

        pytest.fail("memlint verify: the fix did not hold up\n" + render_human(outcome), pytrace=False)


_OPTIONS = pytest.StashKey()
_OUTCOME = pytest.StashKey()


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("memlint_verify")
    if marker is None:
        return
    if len(marker.args) != 1:
        pytest.fail("memlint_verify takes one script path", pytrace=False)
    options = _options(item.config, marker.args[0], dict(marker.kwargs))
    _skip_unless_runnable(options)
    item.stash[_OPTIONS] = options


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    options = item.stash.get(_OPTIONS, None)
    if options is None:
        return
    outcome = _run(options)
    item.stash[_OUTCOME] = outcome
    _fail_unless_ok(outcome)


@pytest.fixture
def memlint_verify_outcome(request):
    """The outcome of the ``memlint_verify`` marker's verification. Marker
    verification runs in the call phase, so read it in the test body."""

    class _Lazy:
        def __getattr__(self, name):
            try:
                outcome = request.node.stash[_OUTCOME]
            except KeyError:
                raise RuntimeError("no memlint_verify marker on this test, or it has not run yet") from None
            return getattr(outcome, name)

    return _Lazy()


@pytest.fixture
def memlint_verify(request):
    """``memlint_verify(script, check=True, **options) -> Outcome``."""

    def run(script, check=True, **kwargs):
        options = _options(request.config, script, kwargs)
        _skip_unless_runnable(options)
        outcome = _run(options)
        if check:
            _fail_unless_ok(outcome)
        return outcome

    return run
