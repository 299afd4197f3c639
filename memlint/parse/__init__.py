"""Text to a libcst tree, guarded (nesting, time budget), indexed once and walked fast."""
