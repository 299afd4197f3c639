"""The words the gate (Python's ``ast``) and the analysis (libcst) share:
plain tables and string tests, importing nothing of either."""
