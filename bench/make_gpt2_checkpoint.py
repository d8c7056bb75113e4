#!/usr/bin/env python3
"""Writes a folder shaped like GPT-2 small, for bench/checkpoint: config.json
(GPT2LMHeadModel: 12 layers, 12 heads, n_embd 768, 1024 positions, vocab 50257),
model.safetensors with random F32 weights (NumPy's seeded normal draw, std 0.02 as GPT-2's
initializer; LayerNorm gains 1, biases 0; 124,439,808 parameters, 475 MiB) in GPT-2's
checkpoint names and Conv1D (in, out) layout, and GPT-2's real vocab.json and merges.txt
copied from tests/data/gpt2. The numbers are random: this measures speed, not sense.

    python3 bench/make_gpt2_checkpoint.py OUT_DIR TOKENIZER_DIR
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

N, LAYERS, HEADS, POSITIONS, VOCAB = 768, 12, 12, 1024, 50257


def tensors():
    rng = np.random.default_rng(2019)
    normal = lambda *shape: rng.normal(0.0, 0.02, size=shape).astype(np.float32)
    yield "wte.weight", normal(VOCAB, N)
    yield "wpe.weight", normal(POSITIONS, N)
    for l in range(LAYERS):
        p = f"h.{l}."
        yield p + "ln_1.weight", np.ones(N, np.float32)
        yield p + "ln_1.bias", np.zeros(N, np.float32)
        yield p + "attn.c_attn.weight", normal(N, 3 * N)
        yield p + "attn.c_attn.bias", np.zeros(3 * N, np.float32)
        yield p + "attn.c_proj.weight", normal(N, N)
        yield p + "attn.c_proj.bias", np.zeros(N, np.float32)
        yield p + "ln_2.weight", np.ones(N, np.float32)
        yield p + "ln_2.bias", np.zeros(N, np.float32)
        yield p + "mlp.c_fc.weight", normal(N, 4 * N)
        yield p + "mlp.c_fc.bias", np.zeros(4 * N, np.float32)
        yield p + "mlp.c_proj.weight", normal(4 * N, N)
        yield p + "mlp.c_proj.bias", np.zeros(N, np.float32)
    yield "ln_f.weight", np.ones(N, np.float32)
    yield "ln_f.bias", np.zeros(N, np.float32)


def main():
    out, tokenizer_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    arrays = list(tensors())
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, a in arrays:
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-aligned, as safetensors writes it
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, a in arrays:
            f.write(a.tobytes())
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": VOCAB,
              "n_positions": POSITIONS, "n_embd": N, "n_layer": LAYERS, "n_head": HEADS, "n_inner": None,
              "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": 50256,
              "eos_token_id": 50256}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(tokenizer_dir, name), os.path.join(out, name))
    print(sum(a.size for _, a in arrays), "parameters")


if __name__ == "__main__":
    main()
