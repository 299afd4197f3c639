"""mkdocs hook: one page per rule, written at build time from the rule classes.

The page reads the same class data as ``memlint rule CODE`` (the docstring's
sections, ``fix_safety``, ``default_enabled``, ``tokens``) plus the embedded
examples the test suite runs (``invalid`` with their exact fixed text,
``valid`` with why they stay silent), so the site cannot drift from the rules.
A page lives at ``rules/CODE/`` on the site, where ``memlint.rule_doc_url``
points SARIF's ``helpUri``, JSON's ``url`` and the language server's links once
MEMLINT_DOCS_URL names the site (tests/test_docs.py checks both agree).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from memlint.rule import Rule, Safety
from memlint.rule.registry import all_rules
from memlint.rule.table import readable_message

ROOT = Path(__file__).resolve().parents[2]
RULES_INDEX = "rules/index.md"
# The docstring sections shown before the examples, in this order; "References" goes last.
LEADING_SECTIONS = ("What it does", "Why it matters", "Example", "Use instead", "Fix safety")


def page_path(code: str) -> str:
    """``rules/MEM101.md``: the source path that mkdocs serves at ``rules/MEM101/``."""
    return f"rules/{code}.md"


def _fence(code: str, indent: str = "") -> str:
    body = code if code.endswith("\n") else code + "\n"
    return textwrap.indent(f"```python\n{body}```", indent) + "\n"


def _link_codes(text: str, here: str, known: set[str]) -> str:
    """``see MEM101`` becomes a link to MEM101's page; code (fenced or inline)
    and the page's own code stay as they are."""

    def link(match: re.Match) -> str:
        code = match[0]
        return f"[{code}]({code}.md)" if code in known and code != here else code

    chunks = re.split(r"(^\s*```.*?^\s*```[^\n]*$)", text, flags=re.M | re.S)
    for c in range(0, len(chunks), 2):  # outside fenced blocks
        parts = chunks[c].split("`")
        for i in range(0, len(parts), 2):  # outside inline code
            parts[i] = re.sub(r"\bMEM\d{3}\b", link, parts[i])
        chunks[c] = "`".join(parts)
    return "".join(chunks)


def _fix_command(rule: type[Rule]) -> str:
    unsafe = " --unsafe-fixes" if rule.fix_safety is Safety.UNSAFE else ""
    return f"memlint check --fix{unsafe} --select {rule.code}"


def _fix_line(rule: type[Rule]) -> str:
    return {
        Safety.SAFE: "**safe**: `memlint check --fix` applies it; it never changes results",
        Safety.UNSAFE: "**unsafe**: applied only with `--unsafe-fixes`; it may change behaviour",
        Safety.NONE: "**none**: memlint reports it; the change is yours to make",
    }[rule.fix_safety]


def _flagged(rule: type[Rule]) -> list[str]:
    out = ["## Flagged, and fixed", ""]
    out.append(
        "Each snippet below is flagged by this rule; the second tab is the exact text "
        f"`{_fix_command(rule)}` leaves. The test suite runs every one of them."
    )
    out.append("")
    for i, example in enumerate(rule.invalid, 1):
        count = f" ({example.count} findings)" if example.count != 1 else ""
        out.append(f"### Flagged example {i}{count}")
        out.append("")
        out.append('=== "Flagged"')
        out.append("")
        out.append(_fence(example.source, "    "))
        if example.fixed is None:
            out.append('=== "No automatic fix"')
            out.append("")
            out.append("    memlint reports this and leaves the code as it is.")
        else:
            out.append('=== "Fixed"')
            out.append("")
            out.append(_fence(example.fixed, "    "))
        out.append("")
    return out


def _left_alone(rule: type[Rule]) -> list[str]:
    out = ["## Left alone: the false-positive traps", ""]
    out.append(
        "Code that looks like the pattern but is not a problem. Each snippet is a test "
        "that requires the rule to stay silent."
    )
    out.append("")
    for example in rule.valid:
        title = " ".join((example.why or "Not flagged").split()).replace('"', "'")
        out.append(f'??? success "{title}"')
        out.append("")
        out.append(_fence(example.source, "    "))
    return out


def _options(rule: type[Rule]) -> list[str]:
    if rule.default_enabled:
        enabled = (
            f'Enabled by default. Turn it off with `ignore = ["{rule.code}"]` in '
            f"`[tool.memlint]` (or `--ignore {rule.code}`)."
        )
    else:
        enabled = (
            f'Off by default (opt-in). Turn it on with `extend-select = ["{rule.code}"]` in '
            f"`[tool.memlint]` (or `--extend-select {rule.code}`)."
        )
    tokens = ", ".join(f"`{t}`" for t in rule.tokens)
    return [
        "## Options",
        "",
        f"- {enabled}",
        f"- Silence one finding with `# noqa: {rule.code}` on its statement, or a group with "
        f"`# noqa: {rule.code[:4]}`; see [Configuration](../configuration.md).",
        "- The rule has no settings of its own.",
        f"- Checked only in files that contain one of {tokens} (the pre-filter).",
        "",
    ]


def _project(rule: type[Rule]) -> list[str]:
    """Which facts the rule may take from other modules of the project."""
    out = ["## Facts from other modules", ""]
    if rule.project_facts:
        out.append(rule.project_facts)
        out.append("")
    out.append(
        "Like every rule, it sees names that reach the file through `from module import *` of a module of the "
        "project (`torch` from `from utils import *`). An import memlint cannot resolve inside the project is "
        "unknown, and the rule stays silent where the answer depends on it. See "
        "[the project stage](../architecture.md#the-project-stage)."
    )
    out.append("")
    return out


def render_rule_page(rule: type[Rule]) -> str:
    known = {r.code for r in all_rules()}
    sections = {t: _link_codes(x, rule.code, known) for t, x in rule.doc_sections().items()}
    out = [f"# {rule.code} {rule.name}", ""]
    out.append(f"> {readable_message(rule.message)}")
    out.append("")
    out.append(f"- Fix: {_fix_line(rule)}.")
    out.append("- " + ("Enabled by default." if rule.default_enabled else "Off by default (opt-in)."))
    out.append(f"- In the terminal: `memlint rule {rule.code}`.")
    out.append("")
    for title in LEADING_SECTIONS:
        if sections.get(title):
            out += [f"## {title}", "", sections[title], ""]
    out += _flagged(rule)
    out += _left_alone(rule)
    out += _project(rule)
    out += _options(rule)
    for title, text in sections.items():
        if title not in LEADING_SECTIONS and text:
            out += [f"## {title}", "", text, ""]
    return "\n".join(out).rstrip() + "\n"


def render_rule_index(rules: tuple[type[Rule], ...]) -> str:
    out = [
        "# Rules",
        "",
        "Every rule is on by default except the opt-in MEM403. Each page is generated "
        "from the rule's class, the same source `memlint rule CODE` prints.",
        "",
        "| code | name | what it flags | fix |",
        "| --- | --- | --- | --- |",
    ]
    here = Path(RULES_INDEX).parent
    for rule in rules:
        link = Path(page_path(rule.code)).relative_to(here).as_posix()
        fix = rule.fix_safety.value + ("" if rule.default_enabled else " (opt-in rule)")
        message = readable_message(rule.message).replace("|", "\\|")
        out.append(f"| [{rule.code}]({link}) | {rule.name} | {message} | {fix} |")
    return "\n".join(out) + "\n"


# -- mkdocs hooks ---------------------------------------------------------


def on_config(config):
    # Snippets (bench/README.md, CONTRIBUTING.md) resolve from the repository,
    # whatever folder mkdocs was started in.
    snippets = config["mdx_configs"].setdefault("pymdownx.snippets", {})
    snippets["base_path"] = [str(ROOT)]
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Rules" in entry:
            entry["Rules"] = [RULES_INDEX] + [{r.code: page_path(r.code)} for r in all_rules()]
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    rules = all_rules()
    files.append(File.generated(config, RULES_INDEX, content=render_rule_index(rules)))
    for rule in rules:
        files.append(File.generated(config, page_path(rule.code), content=render_rule_page(rule)))
    return files
