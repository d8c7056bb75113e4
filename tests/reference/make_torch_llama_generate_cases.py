#!/usr/bin/env python3
"""Writes torch_generate/<case>.json (an attn decoder-only model file, Llama-style) and
torch_generate/<case>.expected.json: greedy generation of several tokens by PyTorch float64,
the token ids and every step's next-token logits.

The model is Llama's decoder (Mistral's with the sliding window), written by hand since
PyTorch 1.13 has no module for it: RMSNorm before each sub-layer, RoPE on the queries and keys
(rotate-half: dimension i pairs with i + d/2, as Hugging Face's apply_rotary_pos_emb), grouped-
query attention (H query heads, G key/value heads, repeat_interleave), a causal mask with a
sliding window of W positions, a SwiGLU feed-forward network (silu(x W_1) * (x W_3)) W_2, a
final RMSNorm and a tied or linear output head; no biases.

Each step runs the model over the whole prefix (no cache), takes the last position's logits,
leaves out the tokens attn never writes (<PAD>, <UNK>, <BOS>: their logits -inf) and appends
the argmax; it stops after <EOS> or max_new_tokens. A second loop with its own KV cache (each
layer's keys after RoPE and values, G heads, one new row per step, the query reading the last
W rows) must give the same logits to 1e-12.

Run once with Debian's python3-torch; tests/forward/torch_generate_reference_test.cpp reads
the output (the cases are appended to torch_generate/cases.txt):
    /usr/bin/python3 tests/reference/make_torch_llama_generate_cases.py
"""
import math

import torch
import torch.nn.functional as F

import torch_common as C
from torch_common import nested

torch.set_default_dtype(torch.float64)
OUT_DIR = C.out_dir("torch_generate")
VOCAB = C.GENERATE_VOCAB

CASES = [
    dict(name="llama_greedy_gqa_window", N=8, H=4, G=2, F=12, layers=2, theta=10000.0, window=3, eps=1e-6,
         output="tied", prompt=["<BOS>", "the", "cat"], max_new_tokens=8, seed=41),
    dict(name="llama_greedy_mqa_linear", N=12, H=3, G=1, F=16, layers=1, theta=500.0, window=2, eps=1e-5,
         output="linear", prompt=["<BOS>", "a"], max_new_tokens=7, seed=42),
]


def params(c):
    torch.manual_seed(c["seed"])
    N, H, G, Fw = c["N"], c["H"], c["G"], c["F"]
    d = N // H
    r = lambda *shape, scale: torch.randn(*shape) * scale
    p = {"E": torch.randn(len(VOCAB), N), "layers": []}
    for _ in range(c["layers"]):
        p["layers"].append({
            "norm1": 1.0 + r(N, scale=0.3), "norm2": 1.0 + r(N, scale=0.3),
            "W_q": r(N, H * d, scale=1.2 / math.sqrt(N)), "W_k": r(N, G * d, scale=1.2 / math.sqrt(N)),
            "W_v": r(N, G * d, scale=1.2 / math.sqrt(N)), "W_o": r(H * d, N, scale=1.0 / math.sqrt(H * d)),
            "W_1": r(N, Fw, scale=1.0 / math.sqrt(N)), "W_3": r(N, Fw, scale=1.0 / math.sqrt(N)),
            "W_2": r(Fw, N, scale=1.0 / math.sqrt(Fw)),
        })
    p["final"] = 1.0 + r(N, scale=0.3)
    p["W_out"] = r(N, len(VOCAB), scale=1.0 / math.sqrt(N)) if c["output"] == "linear" else None
    return p


def rms(x, gamma, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * gamma


def rope(x, positions, theta):
    """x is (..., S, d), row s at positions[s]: Llama's rotate-half."""
    d = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    angles = torch.outer(positions.to(torch.float64), inv_freq)  # (S, d/2)
    emb = torch.cat((angles, angles), dim=-1)
    half = d // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * emb.cos() + rotated * emb.sin()


def swiglu(x, l):
    return (F.silu(x @ l["W_1"]) * (x @ l["W_3"])) @ l["W_2"]


def head(x, p):
    return x @ (p["E"].T if p["W_out"] is None else p["W_out"])


def full_logits(p, c, ids):
    """The whole prefix at once: (S,) ids -> (S, V) logits, no cache."""
    N, H, G, W = c["N"], c["H"], c["G"], c["window"]
    d = N // H
    S = len(ids)
    x = p["E"][torch.tensor(ids)]  # (S, N)
    i, j = torch.arange(S)[:, None], torch.arange(S)[None, :]
    mask = torch.zeros(S, S).masked_fill((j > i) | (i - j >= W), float("-inf"))
    pos = torch.arange(S)
    for l in p["layers"]:
        h = rms(x, l["norm1"], c["eps"])
        q = (h @ l["W_q"]).view(S, H, d).transpose(0, 1)  # (H, S, d)
        k = (h @ l["W_k"]).view(S, G, d).transpose(0, 1)  # (G, S, d)
        v = (h @ l["W_v"]).view(S, G, d).transpose(0, 1)
        q, k = rope(q, pos, c["theta"]), rope(k, pos, c["theta"])
        k, v = k.repeat_interleave(H // G, dim=0), v.repeat_interleave(H // G, dim=0)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d) + mask, dim=-1)
        x = x + (w @ v).transpose(0, 1).reshape(S, H * d) @ l["W_o"]
        x = x + swiglu(rms(x, l["norm2"], c["eps"]), l)
    return head(rms(x, p["final"], c["eps"]), p)


def cached_logits(p, c, ids):
    """The same logits one token at a time with a KV cache of G heads, keys turned by RoPE."""
    N, H, G, W = c["N"], c["H"], c["G"], c["window"]
    d = N // H
    caches = [([], []) for _ in p["layers"]]
    out = []
    for t, token in enumerate(ids):
        x = p["E"][token]  # (N,)
        pos = torch.tensor([t])
        for (ks, vs), l in zip(caches, p["layers"]):
            h = rms(x, l["norm1"], c["eps"])
            q = rope((h @ l["W_q"]).view(H, 1, d), pos, c["theta"])  # (H, 1, d)
            ks.append(rope((h @ l["W_k"]).view(G, 1, d), pos, c["theta"]))
            vs.append((h @ l["W_v"]).view(G, 1, d))
            K = torch.cat(ks[-W:], 1).repeat_interleave(H // G, dim=0)  # (H, <=W, d)
            V = torch.cat(vs[-W:], 1).repeat_interleave(H // G, dim=0)
            w = torch.softmax(q @ K.transpose(-2, -1) / math.sqrt(d), dim=-1)  # (H, 1, <=W)
            x = x + (w @ V).reshape(H * d) @ l["W_o"]
            x = x + swiglu(rms(x, l["norm2"], c["eps"]), l)
        out.append(head(rms(x, p["final"], c["eps"]), p))
    return out


def make_case(c):
    p = params(c)
    ids = [VOCAB.index(t) for t in c["prompt"]]
    steps = C.greedy_steps(lambda prefix: full_logits(p, c, prefix)[-1], ids, c["max_new_tokens"])
    C.check_cached(cached_logits(p, c, ids), steps, len(c["prompt"]))
    layers = [{"self_attention": {w: nested(l[w]) for w in ("W_q", "W_k", "W_v", "W_o")},
               "norm1": {"gamma": nested(l["norm1"])},
               "ffn": {w: nested(l[w]) for w in ("W_1", "W_2", "W_3")},
               "norm2": {"gamma": nested(l["norm2"])}} for l in p["layers"]]
    doc = {
        "comment": f"Generated by tests/reference/make_torch_llama_generate_cases.py: {c['name']}, a decoder-only "
                   f"Llama-style model (RMSNorm, RoPE, grouped-query attention, SwiGLU, sliding window) whose greedy "
                   f"generation PyTorch {torch.__version__} float64 computed",
        "model": {"architecture": "decoder-only", "d_model": c["N"], "num_heads": c["H"], "num_kv_heads": c["G"],
                  "d_ff": c["F"], "num_layers": c["layers"], "norm_first": True, "norm": "rmsnorm",
                  "layer_norm_eps": c["eps"], "activation": "swiglu", "positional_encoding": "rope",
                  "rope_theta": c["theta"], "sliding_window": c["window"]},
        "vocab": VOCAB,
        "embedding": nested(p["E"]),
        "input": {"tokens": c["prompt"]},
        "decoder": layers,
        "decoder_norm": {"gamma": nested(p["final"])},
        "output": "tied" if p["W_out"] is None else {"W": nested(p["W_out"])},
    }
    expected = {"case": c["name"], "prompt": c["prompt"], "max_new_tokens": c["max_new_tokens"], "steps": steps}
    return doc, expected


def main():
    C.write_generate_cases(OUT_DIR, [make_case(c) for c in CASES])


if __name__ == "__main__":
    main()
