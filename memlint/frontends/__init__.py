"""The ways in: the `memlint` command line and the flake8 plugin (`server/`, `verify/` sit beside)."""
