#!/usr/bin/env python3
"""Writes numpy_format_cases.json: arrays and the exact text NumPy's array2string gives them.

Run once with Debian's python3-numpy (1.24); the C++ tests read the committed output, so
the build never needs NumPy:  /usr/bin/python3 make_numpy_format_cases.py
"""
import json
import numpy as np

CASES = [
    ("np.array([[0.1,0.27,-0.35,-0.11],[-1.86,-0.25,-1.25,-0.36]])", 4, True, 75),
    ("np.array([0.125, 2.675, 0.99996, 1e-9, -3.5])", 4, True, 75),
    ("np.array([[1.0, -np.inf],[0.5, 2.0]])", 4, True, 75),
    ("np.array([1.27232943, -1.92447047, -8.25559166, -10.29629482, 6.887794, 5.53096911])", 8, False, 75),
    ("np.array([1e-5, 1.0, 12345.678])", 4, False, 75),
    ("np.array([1e9, -2.5])", 3, True, 75),
    ("np.array([-1.5e12, 2.5e-3, np.inf])", 4, True, 75),
    ("np.arange(24, dtype=float).reshape(2,3,4)/7", 3, True, 75),
    ("np.arange(2000, dtype=float).reshape(2,1000)/3", 4, True, 75),
    ("np.arange(30, dtype=float)*1.123456", 4, True, 40),
    ("np.array([-0.0, 1e-7, -1e-7])", 4, True, 75),
    ("np.array([np.nan, 1.5])", 4, True, 75),
    ("np.array([-np.inf, -np.inf])", 4, True, 75),
    ("np.arange(1200, dtype=float).reshape(10,10,12)-600.5", 2, True, 75),
    ("np.arange(16, dtype=float).reshape(2,2,2,2)*0.5-3", 4, True, 75),
    ("np.random.RandomState(3).randn(3,7)*100", 4, True, 75),
    ("np.random.RandomState(4).randn(5,9)", 6, True, 60),
    ("np.random.RandomState(5).randn(2,3,4,5)", 4, True, 75),
    ("np.random.RandomState(6).randn(40,40)", 4, True, 120),
]

def main():
    out = []
    for expr, precision, suppress, width in CASES:
        a = eval(expr)
        text = np.array2string(a, precision=precision, suppress_small=suppress, max_line_width=width,
                               threshold=1000, edgeitems=3)
        data = [x if np.isfinite(x) else str(x) for x in a.ravel().tolist()]
        out.append({"expr": expr, "precision": precision, "suppress": suppress, "linewidth": width,
                    "shape": list(a.shape), "data": data, "text": text})
    with open("numpy_format_cases.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")

if __name__ == "__main__":
    main()
