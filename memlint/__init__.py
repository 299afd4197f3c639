"""memlint: find, fix and verify PyTorch habits that waste GPU memory."""

from __future__ import annotations

import os

__version__ = "0.1.0"

# Where the code is hosted. The install commands that work before the
# package is on PyPI (pip's git URL, pre-commit's `repo:`) and the default
# documentation links derive from it: moving the repository is this line.
REPOSITORY_URL = "https://github.com/torch-memlint/torch-memlint"
# The documentation as it renders where the code is hosted: the pages of
# docs/, and each rule's own module, whose docstring is the rule's
# documentation (what `memlint rule CODE` prints).
REPOSITORY_DOCS_URL = f"{REPOSITORY_URL}/blob/main/docs/"
# The built site (mkdocs.yml's site_url; docs/hooks/rule_pages.py writes a
# page per rule under rules/CODE/). Not published yet: point memlint's links
# at it, or at a mirror, with MEMLINT_DOCS_URL.
SITE_URL = "https://torch-memlint.readthedocs.io/en/latest/"
DOCS_URL_VARIABLE = "MEMLINT_DOCS_URL"

# The optional extras (pyproject.toml's optional-dependencies, which a test
# keeps equal): a missing one is named with a command that works without
# torch-memlint on PyPI, since the packages themselves are there.
EXTRAS = {
    "verify": ("torch>=2.4",),
    "plot": ("matplotlib>=3.5",),
    "server": ("pygls>=2.1.1", "lsprotocol>=2025.0.0"),
}


def install_hint(extra: str) -> str:
    """``pip install 'pygls>=2.1.1' 'lsprotocol>=2025.0.0'`` (the ``server``
    extra's packages, or ``pip install '.[server]'`` from a clone)."""
    packages = " ".join(f"'{p}'" for p in EXTRAS[extra])
    return f"pip install {packages} (the `{extra}` extra; from a clone: pip install '.[{extra}]')"


def docs_url() -> str:
    """The documentation memlint links to: the one setting behind SARIF's
    ``informationUri``/``helpUri``, JSON's ``url`` and the language server's
    links. The repository's docs/ by default, MEMLINT_DOCS_URL when set."""
    site = os.environ.get(DOCS_URL_VARIABLE, "").strip()
    if not site:
        return REPOSITORY_DOCS_URL
    return site if site.endswith("/") else site + "/"


def rule_doc_url(code: str) -> str:
    """Where the rule's documentation is: its module in the repository, or its
    page on the site that MEMLINT_DOCS_URL names."""
    base = docs_url()
    if base != REPOSITORY_DOCS_URL:
        return f"{base}rules/{code}/"
    module = _rule_modules().get(code.upper())
    if module is None:  # not a rule of this version: the rule table
        return f"{REPOSITORY_URL}#rules"
    return f"{REPOSITORY_URL}/blob/main/rules/{module}"


_RULE_MODULES: dict[str, str] | None = None


def _rule_modules() -> dict[str, str]:
    """``MEM101`` -> ``mem101_tensor_accumulated_across_iterations.py``, from
    the file names of memlint.rules: no rule (and no libcst) is imported."""
    global _RULE_MODULES
    if _RULE_MODULES is None:
        import importlib.util

        spec = importlib.util.find_spec("memlint.rules")
        names: dict[str, str] = {}
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for name in sorted(os.listdir(folder)):
                if name.startswith("mem") and name.endswith(".py") and name[3:6].isdigit():
                    names.setdefault(f"MEM{name[3:6]}", name)
        _RULE_MODULES = names
    return _RULE_MODULES
