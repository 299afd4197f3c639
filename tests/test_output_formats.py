"""The CI formats (gitlab, junit, json-lines, rdjson) through the real
command, each checked by its schema or a real consumer, and --output-file."""

import json
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml

SCHEMAS = Path(__file__).parent / "schemas"

# Two findings with safe fixes (MEM702 on line 6, MEM804 on line 8), and a
# non-ASCII comment before the MEM804 fix so byte and character columns differ.
LEAKY = """\
import torch

def train(model, loader, optimizer):
    for x in loader:
        optimizer.step()
        torch.cuda.empty_cache()

s = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, verbose=True)  # é
"""
WIDE = "é = 1; s = torch.optim.lr_scheduler.StepLR(o, step_size=1, verbose=True)\nimport torch\n"


def _project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(LEAKY)
    (tmp_path / "clean.py").write_text("print(1)\n")
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    loss.backward()\n")
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\n")
    return tmp_path


def _schema(name):
    return json.loads((SCHEMAS / name).read_text())


def test_gitlab_report_matches_schema_and_fingerprints_are_stable(tmp_path, run_memlint):
    _project(tmp_path)
    out = run_memlint("check", "--output-format", "gitlab", ".")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    jsonschema.validate(report, _schema("gitlab_codequality.schema.json"))
    assert {(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in report} == {
        ("MEM702", "pkg/train.py", 6),
        ("MEM804", "pkg/train.py", 8),
    }
    assert len({i["fingerprint"] for i in report}) == 2
    # Code added above the findings moves their lines, not their fingerprints.
    path = tmp_path / "pkg" / "train.py"
    path.write_text("# a new comment\n\n" + LEAKY)
    moved = json.loads(run_memlint("check", "--output-format", "gitlab", ".").stdout)
    assert sorted(i["fingerprint"] for i in moved) == sorted(i["fingerprint"] for i in report)
    assert {i["location"]["lines"]["begin"] for i in moved} == {8, 10}


def test_junit_report_reads_in_a_junit_consumer(tmp_path, run_memlint):
    _project(tmp_path)
    out = run_memlint("check", "--output-format", "junit", ".")
    xml = tmp_path / "report.xml"
    xml.write_text(out.stdout)
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(xml))}
    assert set(suites) == {"pkg/train.py", "clean.py", "broken.py"}
    train = suites["pkg/train.py"]
    assert (train.tests, train.failures, train.errors) == (2, 2, 0)
    failures = [r for case in train for r in case.result if isinstance(r, Failure)]
    assert sorted(f.type for f in failures) == ["MEM702", "MEM804"]
    assert all(f.message.startswith(f.type + " ") for f in failures)
    clean = list(suites["clean.py"])
    assert len(clean) == 1 and clean[0].is_passed
    broken = [r for case in suites["broken.py"] for r in case.result]
    assert len(broken) == 1 and isinstance(broken[0], Error)


def test_json_lines_one_finding_per_line(tmp_path, run_memlint):
    _project(tmp_path)
    lines = run_memlint("check", "--output-format", "json-lines", "pkg").stdout.splitlines()
    items = [json.loads(line) for line in lines]
    assert [i["code"] for i in items] == ["MEM702", "MEM804"]
    assert items[0]["location"] == {"row": 6, "column": 9}
    assert items[0]["fix"]["edits"], "json-lines carries the fix edits as json does"


def test_rdjson_matches_schema_with_suggestions_in_utf8_columns(tmp_path, run_memlint):
    (tmp_path / "train.py").write_text(WIDE)
    out = run_memlint("check", "--output-format", "rdjson", "train.py")
    report = json.loads(out.stdout)
    jsonschema.validate(report, _schema("rdjson.schema.json"))
    (diagnostic,) = report["diagnostics"]
    assert diagnostic["code"]["value"] == "MEM804" and diagnostic["code"]["url"].endswith(
        "mem804_scheduler_verbose_deprecated.py"
    )
    assert diagnostic["severity"] == "WARNING"
    text = WIDE.splitlines()[0]
    char_col = text.index("verbose")
    start = diagnostic["location"]["range"]["start"]
    assert start["column"] == len(text[:char_col].encode()) + 1 == char_col + 2  # é is two bytes
    (suggestion,) = diagnostic["suggestions"]
    assert suggestion["text"] == ""
    # Applying the suggestion as reviewdog would (byte columns) gives --fix's text.
    raw = text.encode()
    s, e = suggestion["range"]["start"]["column"] - 1, suggestion["range"]["end"]["column"] - 1
    fixed_line = (raw[:s] + suggestion["text"].encode() + raw[e:]).decode()
    run_memlint("check", "--fix", "train.py")
    assert (tmp_path / "train.py").read_text().splitlines()[0] == fixed_line


def test_rdjson_offers_unsafe_fixes_only_when_allowed(tmp_path, run_memlint):
    (tmp_path / "t.py").write_text(
        "import torch\nfrom torch.utils.checkpoint import checkpoint\n\ndef f(m, x):\n    return checkpoint(m, x)\n"
    )
    plain = json.loads(run_memlint("check", "--output-format", "rdjson", "t.py").stdout)
    unsafe = json.loads(run_memlint("check", "--output-format", "rdjson", "--unsafe-fixes", "t.py").stdout)
    assert [d["code"]["value"] for d in plain["diagnostics"]] == ["MEM602"]
    assert "suggestions" not in plain["diagnostics"][0]
    assert unsafe["diagnostics"][0]["suggestions"]


@pytest.mark.parametrize(
    "fmt", ["text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit", "rdjson"]
)
def test_output_file_with_every_format(tmp_path, run_memlint, fmt):
    _project(tmp_path)
    target = tmp_path / "reports" / f"memlint.{fmt}"
    out = run_memlint("check", "--output-format", fmt, "--output-file", target, "pkg", env={"FORCE_COLOR": "1"})
    assert out.returncode == 1
    expected = run_memlint("check", "--output-format", fmt, "-q", "pkg").stdout
    assert target.read_text() == expected, "the file holds exactly what stdout would, without colour"
    assert "\x1b[" not in target.read_text()
    # The terminal still gets the human report and the summary.
    assert "MEM702" in out.stdout and "Found 2 findings" in out.stdout


def test_output_file_that_cannot_be_written_is_a_clear_error(tmp_path, run_memlint):
    _project(tmp_path)
    (tmp_path / "blocker").write_text("")
    out = run_memlint("check", "--output-file", tmp_path / "blocker" / "x.json", "pkg")
    assert out.returncode == 2
    assert "cannot write the report to" in out.stderr and "blocker" in out.stderr
