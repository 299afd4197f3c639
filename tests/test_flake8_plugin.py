"""The flake8 plugin, through the real `flake8` command, against `memlint check`."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlint.frontends import flake8_plugin
from memlint.frontends.flake8_plugin import Flake8Checker
from memlint.rule.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
MEMLINT = [str(Path(sys.executable).with_name("memlint"))]
FLAKE8 = [str(Path(sys.executable).with_name("flake8"))]
OFF_BY_DEFAULT = [r for r in all_rules() if not r.default_enabled]
FORMAT = "--format=%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"

LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)


def flake8(*args, cwd, input=None):
    env = dict(os.environ)
    return subprocess.run(
        FLAKE8 + [FORMAT, *map(str, args)], cwd=cwd, input=input, capture_output=True, text=True, timeout=300, env=env
    )


def mem_lines(proc):
    """(path, row, col, code, message) of the MEM findings flake8 printed."""
    assert "Traceback" not in proc.stderr, proc.stderr
    out = []
    for line in proc.stdout.splitlines():
        path, row, col, code, text = line.split("|", 4)
        if code.startswith("MEM"):
            out.append((os.path.normpath(path), int(row), int(col), code, text))
    return sorted(out)


def cli_findings(paths, cwd, *args):
    proc = subprocess.run(
        MEMLINT + ["check", "--output-format", "json", "--no-cache", *args, *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    found = [
        (os.path.relpath(i["filename"], cwd), i["location"]["row"], i["location"]["column"], i["code"], i["message"])
        for i in json.loads(proc.stdout)
    ]
    unparsed = {line.split(": ")[2] for line in proc.stderr.splitlines() if line.startswith("memlint: error: ")}
    return sorted(found), unparsed


def corpus(folder: Path) -> list[str]:
    """Every rule's embedded examples, every .py under fixtures/ and
    tests/corpus/, and a few encodings and noqa forms, as files in ``folder``."""
    files = {}
    for rule in all_rules():
        for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid)):
            for i, ex in enumerate(examples):
                files[f"{rule.code}_{kind}_{i}.py"] = ex.source.encode()
    for base in ("fixtures", "tests/corpus"):
        for path in sorted((ROOT / base).rglob("*.py")):
            files[str(path.relative_to(ROOT)).replace("/", "__")] = path.read_bytes()
    files["crlf.py"] = LEAKY.replace("\n", "\r\n").encode()
    files["bom.py"] = b"\xef\xbb\xbf" + LEAKY.encode()
    files["tabs.py"] = LEAKY.replace("    ", "\t").encode()
    files["mixed_tabs.py"] = LEAKY.replace("\n        ", "\n\t    ").encode()  # Python accepts, libcst does not
    files["noqa.py"] = (
        b"import torch\nfor b in loader:\n"
        b"    torch.cuda.empty_cache()  # noqa\n"
        b"    torch.cuda.empty_cache()  # noqa: MEM702\n"
        b"    torch.cuda.empty_cache()  # noqa:E501\n"
        b"    torch.cuda.empty_cache(\n        # noqa: MEM7\n    )\n"
    )
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return sorted(files)


def test_same_findings_as_cli_over_every_example_and_fixture(tmp_path):
    names = corpus(tmp_path)
    # Off-by-default rules too (their default is tested below), in one run.
    select = ("--extend-select", ",".join(r.code for r in OFF_BY_DEFAULT)) if OFF_BY_DEFAULT else ()
    expected, unparsed = cli_findings(names, tmp_path, *select)
    got = mem_lines(flake8("--isolated", *select, *names, cwd=tmp_path))
    assert expected, "the corpus should hold findings"
    # A file the CLI cannot parse gets no MEM finding from flake8 either.
    assert not {g[0] for g in got} & unparsed
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    assert got == expected, f"CLI only: {missing}\nflake8 only: {extra}"


def test_positions_are_flake8s(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY)
    got = mem_lines(flake8("--isolated", "train.py", cwd=tmp_path))
    # flake8 prints 1-based columns from the plugin's 0-based ones, as the CLI does
    assert [g[:4] for g in got] == [("train.py", 6, 9, "MEM702")]


def test_noqa_is_flake8s_own(tmp_path):
    (tmp_path / "t.py").write_text(
        "import torch\nwhile True:\n"
        "    torch.cuda.empty_cache()  # noqa: MEM702\n"
        "    torch.cuda.empty_cache()  # noqa\n"
        "    torch.cuda.empty_cache()  # noqa: E501\n"
    )
    assert [g[1] for g in mem_lines(flake8("--isolated", "t.py", cwd=tmp_path))] == [5]
    assert [g[1] for g in mem_lines(flake8("--isolated", "--disable-noqa", "t.py", cwd=tmp_path))] == [3, 4, 5]


@pytest.mark.parametrize(
    "args, reported",
    [
        ((), True),
        (("--select", "MEM702"), True),
        (("--select", "MEM7"), True),
        (("--select", "E,W,F"), False),
        (("--ignore", "MEM702"), False),
        (("--extend-ignore", "MEM7"), False),
    ],
)
def test_select_and_ignore(tmp_path, args, reported):
    (tmp_path / "train.py").write_text(LEAKY)
    got = mem_lines(flake8("--isolated", *args, "train.py", cwd=tmp_path))
    assert bool(got) is reported


def test_indentation_mixing_tabs_is_read_as_check_reads_it(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY.replace("\n        ", "\n\t    "))
    expected, unparsed = cli_findings(["train.py"], tmp_path)
    assert not unparsed and [e[1:4] for e in expected] == [(6, 6, "MEM702")]
    assert mem_lines(flake8("--isolated", "train.py", cwd=tmp_path)) == expected


def test_plugin_adds_only_its_config_option():
    class Manager:
        def __init__(self):
            self.options, self.ignored = [], []

        def add_option(self, *args, **kwargs):
            self.options.append((args, kwargs))

        def extend_default_ignore(self, codes):
            self.ignored.extend(codes)

    manager = Manager()
    Flake8Checker.add_options(manager)
    # The plugin decides what runs, as `memlint check` does; a default ignore
    # in flake8 would hide an opt-in rule the project's config selects.
    assert manager.ignored == []
    assert [a for a, _ in manager.options] == [("--memlint-config",)]
    assert manager.options[0][1]["parse_from_config"] is True


@pytest.mark.parametrize("rule", OFF_BY_DEFAULT, ids=lambda r: r.code)
@pytest.mark.parametrize("args", [(), ("--select", "MEM"), ("--select", "MEM4"), ("--extend-select", "MEM")])
def test_off_by_default_rule_stays_off_as_in_check(tmp_path, rule, args):
    # `--select MEM` restricts flake8's output to memlint's codes; it does not
    # turn on a rule `memlint check` leaves off.
    (tmp_path / "ex.py").write_text(rule.invalid[0].source)
    expected, _ = cli_findings(["ex.py"], tmp_path)
    assert rule.code not in {e[3] for e in expected}
    assert rule.code not in {g[3] for g in mem_lines(flake8("--isolated", *args, "ex.py", cwd=tmp_path))}


@pytest.mark.parametrize("rule", OFF_BY_DEFAULT, ids=lambda r: r.code)
@pytest.mark.parametrize("key", ["extend-select", "select"])
def test_off_by_default_rule_selected_in_config(tmp_path, rule, key):
    (tmp_path / "pyproject.toml").write_text(f'[tool.memlint]\n{key} = ["{rule.code}"]\n')
    (tmp_path / "ex.py").write_text(rule.invalid[0].source)
    expected, _ = cli_findings(["ex.py"], tmp_path)
    got = mem_lines(flake8("--isolated", "ex.py", cwd=tmp_path))
    assert {g[3] for g in got} == {e[3] for e in expected} == {rule.code}


def test_nearest_config_of_each_file_as_in_check(tmp_path):
    # A nested project's settings hold for its files, a pattern in its
    # per-file-ignores is relative to its folder, whatever folder flake8 runs in.
    files = {
        "pyproject.toml": '[tool.memlint]\nignore = ["MEM701"]\n',
        "train.py": LEAKY,
        "proj/pyproject.toml": '[tool.memlint]\nper-file-ignores = { "scripts/*" = ["MEM702"] }\n',
        "proj/train.py": LEAKY,
        "proj/scripts/legacy.py": LEAKY,
        "proj/sub/pyproject.toml": '[tool.memlint]\nignore = ["MEM7"]\n',
        "proj/sub/train.py": LEAKY,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    names = [n for n in files if n.endswith(".py")]
    expected, _ = cli_findings(names, tmp_path)
    assert [e[0] for e in expected] == ["proj/train.py", "train.py"]
    assert mem_lines(flake8("--isolated", *names, cwd=tmp_path)) == expected
    got = mem_lines(flake8("--isolated", "train.py", "scripts/legacy.py", "sub/train.py", cwd=tmp_path / "proj"))
    assert [g[0] for g in got] == ["train.py"]


@pytest.mark.parametrize("rule", OFF_BY_DEFAULT, ids=lambda r: r.code)
def test_off_by_default_rule_needs_extend_select(tmp_path, rule):
    (tmp_path / "ex.py").write_text(rule.invalid[0].source)
    assert not mem_lines(flake8("--isolated", "ex.py", cwd=tmp_path))
    got = mem_lines(flake8("--isolated", "--extend-select", rule.code, "ex.py", cwd=tmp_path))
    assert {g[3] for g in got} == {rule.code}


def test_tool_memlint_settings_are_honoured(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.memlint]\nignore = ["MEM701"]\nper-file-ignores = { "scripts/*" = ["MEM7"] }\n'
    )
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.py").write_text(LEAKY)
    (tmp_path / "train.py").write_text(LEAKY)
    got = mem_lines(flake8("--isolated", "train.py", "scripts/train.py", cwd=tmp_path))
    assert [g[0] for g in got] == ["train.py"]
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nignore = ["MEM702"]\n')
    assert not mem_lines(flake8("--isolated", "train.py", cwd=tmp_path))


def test_memlint_config_option_and_flake8_config(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY)
    (tmp_path / "memlint.toml").write_text('ignore = ["MEM702"]\n')
    assert mem_lines(flake8("--isolated", "train.py", cwd=tmp_path))
    assert not mem_lines(flake8("--isolated", "--memlint-config", "memlint.toml", "train.py", cwd=tmp_path))
    (tmp_path / ".flake8").write_text("[flake8]\nmemlint-config = memlint.toml\n")
    assert not mem_lines(flake8("train.py", cwd=tmp_path))


def test_broken_config_is_reported_not_a_crash(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nignore = ["NOPE1"]\n')
    (tmp_path / "train.py").write_text(LEAKY)
    proc = flake8("--isolated", "train.py", cwd=tmp_path)
    (line,) = mem_lines(proc)
    assert line[3] == "MEM000" and "unknown rule code 'NOPE1'" in line[4]


def test_lints_the_text_flake8_read_from_stdin(tmp_path):
    # An editor sends its unsaved buffer; the file on disk is clean.
    (tmp_path / "train.py").write_text("import torch\n")
    proc = flake8("--isolated", "--stdin-display-name", "train.py", "-", cwd=tmp_path, input=LEAKY)
    assert [g[:4] for g in mem_lines(proc)] == [("train.py", 6, 9, "MEM702")]


def test_syntax_error_is_flake8s_e999_only(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\nfor x in y:\ntorch.cuda.empty_cache()\n")
    proc = flake8("--isolated", "bad.py", cwd=tmp_path)
    assert "|E999|" in proc.stdout
    assert not mem_lines(proc)


def run_checker(text, filename="t.py"):
    return list(Flake8Checker(None, text.splitlines(keepends=True), filename).run())


def test_text_libcst_cannot_parse_yields_nothing(monkeypatch):
    from memlint.lint.engine import ParseError

    def refuse(text, python_tree=None):
        raise ParseError("syntax error at 1:1: libcst says no")

    monkeypatch.setattr("memlint.lint.engine.parse_module", refuse)
    assert run_checker(LEAKY) == []


def test_internal_error_is_reported_not_raised(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr("memlint.lint.engine.lint", broken)
    ((line, col, message, _),) = run_checker(LEAKY)
    assert (line, col) == (1, 0) and message.startswith("MEM000 memlint internal error: ValueError: boom")


def test_file_without_torch_costs_only_the_prefilter(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("a file no rule can match must not be configured or parsed")

    monkeypatch.setattr("memlint.lint.engine.lint", forbidden)
    monkeypatch.setattr(flake8_plugin, "config_for", forbidden)
    assert run_checker("import numpy as np\n\nfor i in range(3):\n    print(np.ones(i))\n" * 50) == []


def test_checker_yields_flake8_tuples():
    ((line, col, message, kind),) = run_checker(LEAKY)
    assert (line, col) == (6, 8)  # 0-based column, as flake8 expects from plugins
    assert message.startswith("MEM702 ") and kind is Flake8Checker
