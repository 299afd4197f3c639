"""GitLab CI code-quality report (``artifacts:reports:codequality``).

The fingerprint must stay the same while a finding stays, so GitLab can tell
new findings from old ones in a merge request: it hashes the path, the code,
the message and the finding's rank among identical ones in the file, not the
line number, which moves whenever code above it changes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from memlint.reporters import relative_path, severity
from memlint.run.results import FileReport

_SEVERITY = {"error": "major", "warning": "minor"}


def render(reports: list[FileReport], root: str | None = None, **_: object) -> str:
    issues = []
    for report in reports:
        path = relative_path(report.path, root)
        seen: Counter[tuple[str, str]] = Counter()
        for f in report.findings:
            seen[f.code, f.message] += 1
            key = "\0".join((path, f.code, f.message, str(seen[f.code, f.message])))
            where = f"cell {f.cell}: " if f.cell is not None else ""
            issues.append(
                {
                    "type": "issue",
                    "check_name": f.code,
                    "description": f"{where}{f.code} {f.message}",
                    "categories": ["Performance" if f.code.startswith(("MEM1", "MEM2", "MEM7")) else "Bug Risk"],
                    "severity": _SEVERITY[severity(f.code)],
                    "fingerprint": hashlib.sha256(key.encode()).hexdigest(),
                    "location": {"path": path, "lines": {"begin": f.line, "end": f.end_line}},
                }
            )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
