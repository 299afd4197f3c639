"""JUnit XML: a test suite per file, a failing test case per finding, a
passing one for a clean file, an error for a file that could not be checked;
what Jenkins, GitLab, Azure Pipelines and most CI dashboards read."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from memlint.reporters import relative_path
from memlint.run.results import FileReport


def _case(suite: ET.Element, name: str, classname: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")


def render(reports: list[FileReport], root: str | None = None, **_: object) -> str:
    top = ET.Element("testsuites", name="memlint")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for report in reports:
        path = relative_path(report.path, root)
        suite = ET.SubElement(top, "testsuite", name=path)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        if report.error:
            ET.SubElement(_case(suite, "memlint", path), "error", message=report.error).text = report.error
            counts["errors"] += 1
            counts["tests"] += 1
        for f in report.findings:
            where = f"cell {f.cell}:" if f.cell is not None else ""
            location = f"{path}:{where}{f.line}:{f.column + 1}"
            case = _case(suite, f"{f.code} {location}", path)
            case.set("file", path)
            case.set("line", str(f.line))
            failure = ET.SubElement(case, "failure", message=f"{f.code} {f.message}", type=f.code)
            failure.text = f"{location}: {f.code} {f.message}"
            counts["failures"] += 1
            counts["tests"] += 1
        if not counts["tests"]:
            _case(suite, "no findings", path)
            counts["tests"] = 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        top.set(key, str(value))
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"
