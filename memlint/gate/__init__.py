"""The gate: what Python's own ``ast`` tree says about a file, read before
libcst parses it, so that rules whose necessary condition fails are skipped."""
