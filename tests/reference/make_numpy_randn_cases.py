#!/usr/bin/env python3
"""Writes numpy_randn_cases.json: evidence of NumPy's legacy normal stream over long runs.

For each seed, np.random.seed(seed); a = np.random.randn(200000), and we keep
  - the exact values at 56 indices spread over the run (repr: shortest round trip), and
  - the exact float64 sum of all draws added left to right (a plain Python loop, not np.sum,
    whose pairwise summation attn would have to copy too).
One draw that differs in its last bit (a fused multiply-add in x1*x1 + x2*x2, say) changes the
sum, and a rejected pair that should have been kept shifts every value after it.

Run once with Debian's python3-numpy (1.24); tests/numpy_random_test.cpp reads the output:
    /usr/bin/python3 tests/reference/make_numpy_randn_cases.py
"""
import json
import os

import numpy as np

SEEDS = [0, 1, 42, 2**32 - 1]
DRAWS = 200000


def main():
    indices = sorted(set([0, 1, 2, 3, 4, 5] + np.linspace(0, DRAWS - 1, 50).astype(int).tolist()))
    cases = []
    for seed in SEEDS:
        np.random.seed(seed)
        a = np.random.randn(DRAWS)
        total = 0.0
        for v in a.tolist():
            total += v
        cases.append({
            "seed": seed,
            "draws": DRAWS,
            "values": [{"index": i, "value": repr(float(a[i]))} for i in indices],
            "left_to_right_sum": repr(total),
        })
    doc = {
        "generator": f"numpy {np.__version__}: np.random.seed(seed); np.random.randn(draws)",
        "cases": cases,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_randn_cases.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
