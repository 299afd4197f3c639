"""memlint: find, fix and verify PyTorch habits that waste GPU memory."""

__version__ = "0.1.0"
