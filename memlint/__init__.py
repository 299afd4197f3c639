"""memlint: find, fix and verify PyTorch habits that waste GPU memory."""

__version__ = "0.1.0"

# The documentation site (docs/, built by mkdocs.yml). SARIF's helpUri, the
# language server's rule links and the site's own rule pages all derive from
# these two lines, so moving the site is a one-line change.
DOCS_URL = "https://torch-memlint.readthedocs.io/en/latest/"


def rule_doc_url(code: str) -> str:
    """The rule's page on the documentation site (docs/hooks/rule_pages.py writes it)."""
    return f"{DOCS_URL}rules/{code}/"
