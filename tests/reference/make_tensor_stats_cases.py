# Reference values for tests/tensor_stats_test.cpp, made once with Debian's NumPy 1.24:
#   /usr/bin/python3 tests/reference/make_tensor_stats_cases.py
# Prints each case's data (two decimals, so the C++ literals are exact copies) and the
# statistics NumPy computes over the finite values: min, max, mean, std (ddof=0), and the
# summary numbers formatted with '%.4g'.
import numpy as np

np.random.seed(4)
scores = np.round(np.random.randn(2, 2, 6, 6) * 10, 2)
# A causal mask on the first head of the first sentence: 15 entries above the diagonal.
scores[0, 0][np.triu_indices(6, k=1)] = -np.inf

mixed = np.array([0.5, -1.25, np.nan, 3.0, np.inf, -np.inf, 2.75, np.nan])

for name, a in [("scores", scores), ("mixed", mixed)]:
    flat = a.reshape(-1)
    finite = flat[np.isfinite(flat)]
    print(f"// {name}: shape {a.shape}")
    print("{" + ", ".join("-INFINITY" if v == -np.inf else "INFINITY" if v == np.inf else "NAN" if np.isnan(v)
                          else repr(float(v)) for v in flat) + "}")
    stats = [finite.min(), finite.max(), finite.mean(), finite.std()]
    print("min, max, mean, std =", ", ".join(repr(float(v)) for v in stats))
    print("%.4g" % stats[0], "%.4g" % stats[1], "%.4g" % stats[2], "%.4g" % stats[3],
          "finite", finite.size, "-inf", int(np.sum(flat == -np.inf)), "+inf", int(np.sum(flat == np.inf)),
          "nan", int(np.sum(np.isnan(flat))))
