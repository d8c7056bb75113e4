#!/usr/bin/env python3
"""PyTorch float64 generating with its own KV cache, for bench/generate: the model file's
decoder-only weights, GPT-2 style (pre-norm LayerNorm, learned positions, GELU, tied head) or
Llama-style (RMSNorm, RoPE, G key/value heads, SwiGLU, a sliding window W), greedy, the same
loop as attn generate's (the prompt's full run, then one row per token, each layer's keys
(after RoPE) and values kept, G heads, the query reading the last W). Prints the seconds of
the best of `repeat` runs and the tokens.

    python3 bench/torch_generate_reference.py MODEL.json NEW_TOKENS REPEAT THREADS
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F


def main():
    path, new_tokens, repeat, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(threads)
    doc = json.load(open(path))
    m = doc["model"]
    N, H = m["d_model"], m["num_heads"]
    G, W = m.get("num_kv_heads", H), m.get("sliding_window", 0)
    rms, swiglu, rope = m.get("norm") == "rmsnorm", m.get("activation") == "swiglu", m.get(
        "positional_encoding") == "rope"
    gelu_approximation = "tanh" if m.get("activation") == "gelu_tanh" else "none"
    d = N // H
    t = lambda v: torch.tensor(v, dtype=torch.float64)
    E = t(doc["embedding"])
    P = None if rope else t(doc["positions"])
    inv_freq = 1.0 / (m.get("rope_theta", 10000.0) ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    layers = [{k: {kk: t(vv) for kk, vv in v.items()} for k, v in layer.items()} for layer in doc["decoder"]]
    ln_f = {k: t(v) for k, v in doc["decoder_norm"].items()}
    eps = m.get("layer_norm_eps", 1e-5)
    never = [doc["vocab"].index(x) for x in ("<PAD>", "<UNK>", "<BOS>") if x in doc["vocab"]]

    def ln(x, p):
        if rms:
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * p["gamma"]
        return F.layer_norm(x, (N,), p["gamma"], p["beta"], eps)

    def turn(x, position):  # (heads, d) turned by RoPE at `position` (rotate-half)
        angles = position * inv_freq
        cos, sin = torch.cat((angles, angles)).cos(), torch.cat((angles, angles)).sin()
        return x * cos + torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1) * sin

    def ffn(x, f):
        if swiglu:
            return (F.silu(x @ f["W_1"]) * (x @ f["W_3"])) @ f["W_2"]
        # GPT-2's tanh approximation when the model file asks for it, else the exact erf GELU
        return F.gelu(x @ f["W_1"], approximate=gelu_approximation) @ f["W_2"]

    def run():
        ids = [doc["vocab"].index(x) for x in doc["input"]["tokens"]]
        caches = [([], []) for _ in layers]
        out = []
        pos = 0

        def feed(token):
            nonlocal pos
            x = E[token] if rope else E[token] + P[pos]
            for (ks, vs), L in zip(caches, layers):
                a, f = L["self_attention"], L["ffn"]
                h = ln(x, L["norm1"])
                q, k = (h @ a["W_q"]).view(H, d), (h @ a["W_k"]).view(G, d)
                if rope:
                    q, k = turn(q, pos), turn(k, pos)
                ks.append(k)
                vs.append((h @ a["W_v"]).view(G, d))
                K, V = torch.stack(ks[-W:] if W else ks, 1), torch.stack(vs[-W:] if W else vs, 1)  # (G, t, d)
                if G != H:  # Hugging Face's repeat_kv: expand and reshape (repeat_interleave is slow in 1.13)
                    t_len = K.shape[1]
                    K = K[:, None].expand(G, H // G, t_len, d).reshape(H, t_len, d)
                    V = V[:, None].expand(G, H // G, t_len, d).reshape(H, t_len, d)
                w = torch.softmax((K @ q.view(H, d, 1)).squeeze(-1) / math.sqrt(d), dim=-1)
                x = x + (w.unsqueeze(1) @ V).reshape(N) @ a["W_o"]
                x = x + ffn(ln(x, L["norm2"]), f)
            pos += 1
            return ln(x, ln_f) @ E.T

        for token in ids:
            logits = feed(token)
        for _ in range(new_tokens):
            logits[never] = -math.inf
            token = int(torch.argmax(logits))
            out.append(token)
            logits = feed(token)
        return out

    best = math.inf
    with torch.no_grad():
        for _ in range(repeat):
            start = time.perf_counter()
            tokens = run()
            best = min(best, time.perf_counter() - start)
    print(f"{best:.6f}")
    print(" ".join(doc["vocab"][i] for i in tokens))


if __name__ == "__main__":
    main()
