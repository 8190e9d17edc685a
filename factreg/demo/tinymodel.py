"""A tiny random-weight GGUF model that llama-bench and llama-server load in milliseconds (the demo's, the tests'
and the benchmarks' model). Written by `measure/tinygguf.py`, which the control measurement also uses."""

from __future__ import annotations

from factreg.measure.tinygguf import N_CTX, N_EMBD, N_FF, N_HEAD, N_LAYER, SPECIAL_TOKENS, vocabulary, write_tiny_model

__all__ = ["N_CTX", "N_EMBD", "N_FF", "N_HEAD", "N_LAYER", "SPECIAL_TOKENS", "vocabulary", "write_tiny_model"]
