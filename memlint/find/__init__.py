"""Find the files to check: configuration (pyproject.toml / setup.cfg) and discovery."""
