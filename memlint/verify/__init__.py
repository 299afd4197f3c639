"""memlint verify: run a script and its fixed twin, measure memory, compare results."""
