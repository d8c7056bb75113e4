#!/usr/bin/env python3
"""PyTorch float64 generating with its own KV cache, for bench/generate: the model file's
decoder-only (GPT-2 style, pre-norm, learned positions, tied head) weights, greedy, the same
loop as attn generate's (the prompt's full run, then one row per token, each layer's keys and
values kept). Prints the seconds of the best of `repeat` runs and the tokens.

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
    d = N // H
    t = lambda v: torch.tensor(v, dtype=torch.float64)
    E, P = t(doc["embedding"]), t(doc["positions"])
    layers = [{k: {kk: t(vv) for kk, vv in v.items()} for k, v in layer.items()} for layer in doc["decoder"]]
    ln_f = {k: t(v) for k, v in doc["decoder_norm"].items()}
    eps = m.get("layer_norm_eps", 1e-5)
    never = [doc["vocab"].index(x) for x in ("<PAD>", "<UNK>", "<BOS>") if x in doc["vocab"]]

    def ln(x, p):
        return F.layer_norm(x, (N,), p["gamma"], p["beta"], eps)

    def run():
        ids = [doc["vocab"].index(x) for x in doc["input"]["tokens"]]
        caches = [([], []) for _ in layers]
        out = []
        pos = 0

        def feed(token):
            nonlocal pos
            x = E[token] + P[pos]
            pos += 1
            for (ks, vs), L in zip(caches, layers):
                a, f = L["self_attention"], L["ffn"]
                h = ln(x, L["norm1"])
                ks.append((h @ a["W_k"]).view(H, d))
                vs.append((h @ a["W_v"]).view(H, d))
                K, V = torch.stack(ks, 1), torch.stack(vs, 1)
                w = torch.softmax((K @ (h @ a["W_q"]).view(H, d, 1)).squeeze(-1) / math.sqrt(d), dim=-1)
                x = x + (w.unsqueeze(1) @ V).reshape(N) @ a["W_o"]
                x = x + F.gelu(ln(x, L["norm2"]) @ f["W_1"]) @ f["W_2"]
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
