"""factreg: a registry of performance facts, each tied to the conditions it was measured under."""

__version__ = "0.1.0"
