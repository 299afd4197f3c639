"""Autograd: which values carry history, where grad is recorded, what
backward saves and frees, which modules are frozen."""
