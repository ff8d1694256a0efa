"""mobeval: exact, fast, out-of-core evaluation of mobility and recommendation models."""

__version__ = "0.1.0"
