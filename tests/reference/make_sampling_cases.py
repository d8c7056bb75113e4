#!/usr/bin/env python3
"""Writes sampling_cases.json: attn generate's next-token choice, re-implemented in NumPy from
its documentation (docs/generation.md, "The draw"), on random logits.

Each case: V logits (np.random.RandomState(case seed).randn(V) * scale), the tokens never
written (their logits become -inf), temperature T, top_k K, top_p P and the sampling seed S.
For `rows` consecutive rows of logits, drawn from the same sampling stream one after another
(one u per sampled token, greedy draws none), the case records the chosen ids, the draws u, and
the distribution drawn from.

The procedure, as documented:
  z = logits; z[never] = -inf
  T == 0: id = argmax(z) (the lowest id on ties); no draw
  else: z = z / T
        top-k: z[z < sorted(z)[::-1][K-1]] = -inf           (K > 0 and K < the finite count)
        p = softmax(z)
        top-p: order = argsort(-p, kind="stable"); keep order[0], then order[i] while
               sum(p[order[:i]]) < P; the others -inf; p = softmax(z)      (P < 1)
        u = rng.random_sample()        rng = np.random.RandomState(S), one stream per run
        id = np.searchsorted(np.cumsum(p), u, side="right")

Run once with Debian's python3-numpy; tests/forward/sampling_test.cpp reads the output:
    /usr/bin/python3 tests/reference/make_sampling_cases.py
"""
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sampling_cases.json")

CASES = [
    dict(name="greedy", V=12, scale=2.0, never=[0, 1, 2], T=0.0, K=0, P=1.0, S=0, rows=3),
    dict(name="temperature_1", V=12, scale=2.0, never=[0, 1, 2], T=1.0, K=0, P=1.0, S=0, rows=6),
    dict(name="temperature_0.7_seed_42", V=30, scale=1.5, never=[0], T=0.7, K=0, P=1.0, S=42, rows=6),
    dict(name="hot_temperature_2.5", V=30, scale=1.5, never=[], T=2.5, K=0, P=1.0, S=7, rows=6),
    dict(name="top_k_5", V=50, scale=2.0, never=[0, 1], T=1.0, K=5, P=1.0, S=3, rows=8),
    dict(name="top_k_1_is_greedy_with_a_draw", V=20, scale=2.0, never=[], T=0.8, K=1, P=1.0, S=5, rows=4),
    dict(name="top_p_0.9", V=40, scale=2.0, never=[0, 1, 2], T=1.0, K=0, P=0.9, S=11, rows=8),
    dict(name="top_p_0.3_tiny", V=40, scale=3.0, never=[], T=1.0, K=0, P=0.3, S=12, rows=8),
    dict(name="top_k_10_top_p_0.8_temperature_0.9", V=64, scale=2.0, never=[0, 1, 2], T=0.9, K=10, P=0.8,
         S=2024, rows=10),
    dict(name="ties_top_k", V=10, scale=0.0, never=[], T=1.0, K=3, P=1.0, S=9, rows=3),
    dict(name="large_vocab_seed_max", V=1000, scale=4.0, never=[0, 1, 2, 3], T=1.3, K=50, P=0.95,
         S=4294967295, rows=5),
]


def choose(logits, never, T, K, P, rng):
    z = logits.copy()
    z[never] = -np.inf
    if T == 0:
        return int(np.argmax(z)), None, np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    z = z / T
    finite = int(np.isfinite(z).sum())
    if 0 < K < finite:
        kth = np.sort(z)[::-1][K - 1]
        z[z < kth] = -np.inf

    def softmax(v):
        e = np.where(np.isfinite(v), np.exp(v - v[np.isfinite(v)].max()), 0.0)
        return e / e.sum()
    p = softmax(z)
    if P < 1:
        order = np.argsort(-p, kind="stable")
        before = 0.0
        for i, idx in enumerate(order):
            if i > 0 and not before < P:
                z[idx] = -np.inf
            before += p[idx]
        p = softmax(z)
    u = rng.random_sample()
    return int(np.searchsorted(np.cumsum(p), u, side="right")), u, p


def main():
    cases = []
    for i, c in enumerate(CASES):
        data = np.random.RandomState(1000 + i)
        rng = np.random.RandomState(c["S"])
        rows = []
        for _ in range(c["rows"]):
            logits = data.randn(c["V"]) * c["scale"]
            token, u, p = choose(logits, c["never"], c["T"], c["K"], c["P"], rng)
            rows.append({"logits": [repr(float(v)) for v in logits], "id": token,
                         "draw": None if u is None else repr(float(u)),
                         "distribution": [repr(float(v)) for v in p]})
        cases.append({k: c[k] for k in ("name", "V", "never", "T", "K", "P", "S")} | {"rows": rows})
    doc = {"generator": f"numpy {np.__version__}: tests/reference/make_sampling_cases.py", "cases": cases}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=None)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
