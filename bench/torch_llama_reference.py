#!/usr/bin/env python3
"""Llama in PyTorch float32 or float64, as huggingface/transformers' modeling_llama.py defines
it (LlamaRMSNorm, LlamaRotaryEmbedding with the llama3 frequency step, rotate_half,
apply_rotary_pos_emb, repeat_kv, eager attention with the causal mask, LlamaMLP's SwiGLU,
the tied head), read from a checkpoint folder's model.safetensors (parsed by hand: 8 bytes
of header length, the JSON header, the data; BF16 widened to DTYPE by torch), for bench/llama.

Greedy generation with a KV cache, as generate() runs it: the prompt's forward (the head on
its last row only, as generate's logits_to_keep=1), then one row per token. Prints one JSON
line: the generated ids and the seconds of the load, of the prompt's forward and of each
cached token. In float32 every step is modeling_llama.py's (its RMSNorm and RoPE compute in
float32); in float64 they compute in float64 throughout, as attn does (modeling_llama.py
would cast RMSNorm's input to float32).

    python3 bench/torch_llama_reference.py DIR THREADS DTYPE N ID...
"""
import json
import math
import struct
import sys
import time

import numpy as np
import torch

STORED = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64}


def read_safetensors(path, dtype):
    """Every tensor of the file as a torch tensor of DTYPE."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="c", offset=8 + n)  # copy-on-write: writable, never written
    weights = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = torch.from_numpy(data[begin:end]).view(STORED[info["dtype"]]).reshape(info["shape"])
        weights[name] = raw.to(dtype)
    return weights


def inv_frequencies(config, d, dtype):
    """_compute_default_rope_parameters, then _compute_llama3_parameters when rope_type is llama3."""
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))
    s = config.get("rope_scaling")
    if not s or s.get("rope_type", s.get("type")) != "llama3":
        return inv_freq
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old_context_len = s["original_max_position_embeddings"]
    low_freq_wavelen, high_freq_wavelen = old_context_len / low, old_context_len / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low) / (high - low)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    """(G, T, d) -> (G * n_rep, T, d), each key/value head repeated for its query heads."""
    g, t, d = x.shape
    return x[:, None].expand(g, n_rep, t, d).reshape(g * n_rep, t, d)


class Llama:
    """LlamaForCausalLM's forward with a KV cache: CACHE maps a layer to its keys and values."""

    def __init__(self, folder, dtype):
        """Reads FOLDER's config.json and weights, widened to DTYPE, and the rotary frequencies."""
        self.c = json.load(open(f"{folder}/config.json"))
        self.dtype = dtype
        self.w = read_safetensors(f"{folder}/model.safetensors", dtype)
        self.H, self.G = self.c["num_attention_heads"], self.c["num_key_value_heads"]
        self.d = self.c.get("head_dim") or self.c["hidden_size"] // self.H
        self.inv_freq = inv_frequencies(self.c, self.d, dtype)
        self.head = self.w["model.embed_tokens.weight"] if self.c.get("tie_word_embeddings") else self.w["lm_head.weight"]

    def norm(self, x, key):
        """LlamaRMSNorm."""
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.w[key + ".weight"] * (x * torch.rsqrt(variance + self.c["rms_norm_eps"]))

    def attention(self, x, p, start, cache, layer):
        """LlamaAttention on rows X at positions START..., the cache grown by their keys and values."""
        S, w = x.shape[0], self.w
        q = torch.nn.functional.linear(x, w[p + "q_proj.weight"]).view(S, self.H, self.d).transpose(0, 1)
        k = torch.nn.functional.linear(x, w[p + "k_proj.weight"]).view(S, self.G, self.d).transpose(0, 1)
        v = torch.nn.functional.linear(x, w[p + "v_proj.weight"]).view(S, self.G, self.d).transpose(0, 1)
        freqs = torch.outer(torch.arange(start, start + S).to(self.dtype), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin  # apply_rotary_pos_emb
        if layer in cache:
            k, v = torch.cat([cache[layer][0], k], 1), torch.cat([cache[layer][1], v], 1)
        cache[layer] = (k, v)
        k, v = repeat_kv(k, self.H // self.G), repeat_kv(v, self.H // self.G)
        scores = q @ k.transpose(1, 2) * self.d ** -0.5  # (H, S, T)
        if S > 1:
            T = k.shape[1]
            seen = torch.ones(S, T, dtype=torch.bool).tril(T - S)
            scores = scores.masked_fill(~seen, torch.finfo(self.dtype).min)
        weights = torch.nn.functional.softmax(scores, dim=-1)
        return torch.nn.functional.linear((weights @ v).transpose(0, 1).reshape(S, -1), w[p + "o_proj.weight"])

    def forward(self, ids, start, cache):
        """The last row's logits of IDS at positions START..., the cache holding the earlier ones."""
        w, lin = self.w, torch.nn.functional.linear
        h = w["model.embed_tokens.weight"][ids]
        for layer in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{layer}."
            h = h + self.attention(self.norm(h, p + "input_layernorm"), p + "self_attn.", start, cache, layer)
            x = self.norm(h, p + "post_attention_layernorm")
            gate = torch.nn.functional.silu(lin(x, w[p + "mlp.gate_proj.weight"]))
            h = h + lin(gate * lin(x, w[p + "mlp.up_proj.weight"]), w[p + "mlp.down_proj.weight"])
        return lin(self.norm(h[-1:], "model.norm"), self.head)[0]


def main():
    """Loads, runs the prompt and N greedy tokens, prints the ids and the seconds as JSON."""
    folder, threads, dtype, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ids = [int(i) for i in sys.argv[5:]]
    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = Llama(folder, {"float64": torch.float64, "float32": torch.float32}[dtype])
    load = time.perf_counter() - start
    cache, out, steps = {}, [], []
    with torch.no_grad():
        start = time.perf_counter()
        logits = model.forward(ids, 0, cache)
        out.append(int(logits.argmax()))
        prompt = time.perf_counter() - start
        for _ in range(n - 1):
            start = time.perf_counter()
            logits = model.forward([out[-1]], len(ids) + len(out) - 1, cache)
            out.append(int(logits.argmax()))
            steps.append(time.perf_counter() - start)
    print(json.dumps({"ids": out, "load": load, "prompt": prompt, "tokens": steps}))


if __name__ == "__main__":
    main()
