"""memlint's rules, one module per rule (installed as ``memlint.rules``)."""
