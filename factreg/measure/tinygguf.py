"""A tiny random-weight GGUF model that llama-bench and llama-server load in milliseconds.

The control measurement's workload (`control`), and through `demo/tinymodel.py` the tests', the demo's and the
benchmarks' model, so that real llama.cpp binaries can run on any machine. Needs the `gguf` package (the `llama`
extra); imported lazily.
"""

from __future__ import annotations

from pathlib import Path

from factreg.errors import ConfigError

N_EMBD = 64
N_LAYER = 2
N_HEAD = 4
N_FF = 128
N_CTX = 2048
SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")


def vocabulary() -> list[str]:
    """`<unk>`, `<s>`, `</s>` and the 256 byte tokens `<0x00>`…`<0xFF>` (an SPM byte-fallback vocabulary)."""
    return [*SPECIAL_TOKENS, *(f"<0x{b:02X}>" for b in range(256))]


def write_tiny_model(
    path: str | Path, *, n_layer: int = N_LAYER, seed: int = 0, n_embd: int = N_EMBD, n_ff: int = N_FF
) -> Path:
    """Write a llama-architecture GGUF model with random weights to `path`; return the path. A wider `n_embd` and
    `n_ff` make a model whose compute, not its overheads, sets its speed (a test that threads matter)."""
    try:
        import numpy as np
        from gguf import GGUFWriter, TokenType
    except ImportError:  # pragma: no cover - the llama extra is installed in development and CI
        raise ConfigError(
            "writing a tiny model needs the gguf package: pip install 'factreg[llama]'"
        ) from None

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tokens = vocabulary()
    n_vocab = len(tokens)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    tmp = path.with_name(path.name + ".part")
    writer = GGUFWriter(str(tmp), "llama")
    writer.add_name("factreg-tiny")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(n_embd // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(0)  # all F32
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * n_vocab)
    writer.add_token_types([TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)

    # numpy shapes are GGML shapes reversed: token_embd is {n_embd, n_vocab} in GGML.
    writer.add_tensor("token_embd.weight", weight(n_vocab, n_embd))
    writer.add_tensor("output_norm.weight", ones(n_embd))
    writer.add_tensor("output.weight", weight(n_vocab, n_embd))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones(n_embd))
        writer.add_tensor(f"blk.{i}.attn_q.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones(n_embd))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(n_embd, n_ff))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(path)
    return path
