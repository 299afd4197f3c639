"""SARIF 2.1.0, as GitHub code scanning accepts it (1-based columns)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memlint import __version__, docs_url, rule_doc_url
from memlint.reporters import severity
from memlint.rule.registry import all_rules
from memlint.rule.table import readable_message
from memlint.run.results import FileReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_descriptor(rule) -> dict:
    doc = rule.documentation()
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": readable_message(rule.message)},
        "fullDescription": {"text": rule.summary()},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule_doc_url(rule.code),
        "defaultConfiguration": {"level": severity(rule.code)},
        "properties": {"tags": ["pytorch", "memory"], "fix": rule.fix_safety.value},
    }


def _uri(path: str, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_uri()


def _fix(f, artifact: dict) -> dict:
    """The finding's fix as SARIF replacements: the smallest ones, not
    overlapping, so a consumer can apply the fixes of several results of a
    file together (identical replacements, an import two fixes add, once)."""
    assert f.fix is not None
    safety = "" if f.fix.safety.value == "safe" else f" ({f.fix.safety.value} fix: may change behaviour)"
    return {
        "description": {"text": f.fix.title + safety},
        "artifactChanges": [
            {
                "artifactLocation": artifact,
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": e.start_pos[0],
                            "startColumn": e.start_pos[1] + 1,
                            "endLine": e.end_pos[0],
                            "endColumn": e.end_pos[1] + 1,
                        },
                        "insertedContent": {"text": e.content},
                    }
                    for e in f.fix.edits
                    if e.start_pos is not None and e.end_pos is not None
                ],
            }
        ],
    }


def render(reports: list[FileReport], root: str | None = None, **_: object) -> str:
    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    base = Path(os.path.abspath(root or os.getcwd()))
    results = []
    for report in reports:
        for f in report.findings:
            region = {
                "startLine": f.line,
                "startColumn": f.column + 1,
                "endLine": f.end_line,
                "endColumn": f.end_column + 1,
            }
            artifact = {"uri": _uri(f.path, base), "uriBaseId": "%SRCROOT%"}
            result = {
                "ruleId": f.code,
                "ruleIndex": index.get(f.code, 0),
                "level": severity(f.code),
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": region,
                        }
                    }
                ],
            }
            if f.cell is not None:
                result["properties"] = {"cell": f.cell}
            elif f.fix is not None and f.fix.edits:
                result["fixes"] = [_fix(f, artifact)]
            results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": docs_url(),
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
                # Columns count characters (Python's), as every region here does.
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
