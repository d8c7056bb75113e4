#!/usr/bin/env python3
"""GPT-2 in PyTorch float64 or float32, as huggingface/transformers' modeling_gpt2.py defines it
(pre-norm blocks, Conv1D x @ W + b, c_attn holding q, k, v side by side, gelu_new, tied
head), read from a checkpoint folder's model.safetensors (parsed by hand: 8 bytes of header
length, the JSON header, the data) and widened to DTYPE (float64 or float32), for bench/checkpoint. The whole
process is what is timed, as attn's is: start, read, widen, run.

    python3 bench/torch_gpt2_reference.py DIR THREADS DTYPE forward ID...     the logits' last row's argmax
    python3 bench/torch_gpt2_reference.py DIR THREADS DTYPE generate N ID...  N greedy tokens, with a KV cache
"""
import json
import math
import struct
import sys

import numpy as np
import torch


def read_safetensors(path, dtype):
    """Every F32 tensor of the file, widened (or kept) as numpy DTYPE, as torch tensors."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    weights = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=np.float32).reshape(info["shape"])
        weights[name] = torch.from_numpy(a.astype(dtype))
    return weights


class GPT2:
    """GPT2LMHeadModel's forward, with a KV cache: CACHE maps a layer to its keys and values."""

    def __init__(self, folder, dtype):
        """Reads FOLDER's config.json and weights, widened to DTYPE."""
        config = json.load(open(f"{folder}/config.json"))
        self.H, self.eps = config["n_head"], config["layer_norm_epsilon"]
        self.w = read_safetensors(f"{folder}/model.safetensors", dtype)
        self.layers = config["n_layer"]

    def ln(self, x, name):
        """LayerNorm with the named gain and bias."""
        return torch.nn.functional.layer_norm(x, x.shape[-1:], self.w[name + ".weight"], self.w[name + ".bias"],
                                              self.eps)

    def block(self, x, l, cache):
        """GPT2Block l on rows X, appending their keys and values to the cache."""
        w, p = self.w, f"h.{l}."
        S, N = x.shape
        d = N // self.H
        qkv = self.ln(x, p + "ln_1") @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # (S, 3N)
        q, k, v = (t.reshape(S, self.H, d).transpose(0, 1) for t in qkv.split(N, dim=1))  # (H, S, d)
        if l in cache:
            k, v = torch.cat([cache[l][0], k], 1), torch.cat([cache[l][1], v], 1)
        cache[l] = (k, v)
        T = k.shape[1]
        scores = q @ k.transpose(1, 2) / math.sqrt(d)  # (H, S, T)
        mask = torch.ones(S, T, dtype=torch.bool).tril(T - S)
        scores = scores.masked_fill(~mask, float("-inf"))
        context = (scores.softmax(-1) @ v).transpose(0, 1).reshape(S, N)  # (S, N)
        x = x + context @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = self.ln(x, p + "ln_2") @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
        h = torch.nn.functional.gelu(h, approximate="tanh")
        return x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]

    def forward(self, ids, start, cache):
        """The logits of IDS at positions START..., the cache holding the earlier ones."""
        x = self.w["wte.weight"][ids] + self.w["wpe.weight"][start:start + len(ids)]
        for l in range(self.layers):
            x = self.block(x, l, cache)
        return self.ln(x, "ln_f") @ self.w["wte.weight"].T  # (S, V)


def main():
    """Runs the forward or the cached greedy loop the arguments ask for."""
    folder, threads, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    mode, args = sys.argv[4], sys.argv[5:]
    torch.set_num_threads(threads)
    model = GPT2(folder, {"float64": np.float64, "float32": np.float32}[dtype])
    with torch.no_grad():
        if mode == "forward":
            ids = [int(i) for i in args]
            print(int(model.forward(ids, 0, {})[-1].argmax()))
        else:
            n, ids = int(args[0]), [int(i) for i in args[1:]]
            cache, out = {}, []
            logits = model.forward(ids, 0, cache)
            for _ in range(n):
                out.append(int(logits[-1].argmax()))
                logits = model.forward([out[-1]], len(ids) + len(out) - 1, cache)
            print(" ".join(map(str, out)))


if __name__ == "__main__":
    main()
