"""ICML 2025, Executable: one module per paper's method, and ``icml25.book``, the machinery."""

__version__ = "0.1.0"
