"""pytest plugin (entry point ``pytest11``): imports nothing heavy until asked."""


def pytest_addoption(parser):
    group = parser.getgroup("memlint")
    group.addoption(
        "--memlint-verify",
        action="store_true",
        default=False,
        help="run memlint verify on tests marked memlint_verify",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "memlint_verify(script, **options): verify that memlint's fix of SCRIPT holds")
