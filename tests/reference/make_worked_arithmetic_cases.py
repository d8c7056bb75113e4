# Reference values for tests/worked_arithmetic_test.cpp, made once with Debian's NumPy 1.24
# and PyTorch 1.13:  /usr/bin/python3 tests/reference/make_worked_arithmetic_cases.py
# Each block prints the numbers a test asserts; the test quotes them.
import numpy as np
import torch

np.set_printoptions(precision=4)

print("# seed 004: X[0] (\"love\" + PE(1)) times Wq, all four cells")
X0 = np.array([1.34, 0.64, 0.81, 1.20])
Wq = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.1, 0.2, 0.3], [0.2, 0.3, 0.1, 0.5], [0.4, 0.2, 0.5, 0.1]])
print(repr(X0 @ Wq))

print("# seed 004 step 4: QK^T from its Q and K, scaled by 1/2")
Q = np.array([[1.10, 0.82, 1.10, 0.89], [1.18, 0.73, 0.98, 0.85], [1.42, 1.12, 1.23, 1.35]])
K = np.array([[1.05, 0.95, 0.78, 1.12], [1.02, 0.68, 0.72, 0.92], [1.38, 1.28, 1.05, 1.42]])
V = np.array([[0.98, 0.88, 1.02, 0.75], [0.85, 0.72, 0.95, 0.68], [1.25, 1.15, 1.32, 1.08]])
print(repr(Q @ K.T))

print("# softmax of seed 004's scaled row [1.90, 1.61, 2.45] and its intermediates")
x = np.array([1.90, 1.61, 2.45])
e = np.exp(x - x.max())
print("x - max", repr(x - x.max()), "e", repr(e), "sum", repr(e.sum()), "weights", repr(e / e.sum()))

print("# seed 004's Output[\"I\"] = [0.29, 0.21, 0.50] @ V")
print(repr(np.array([0.29, 0.21, 0.50]) @ V))

print("# LayerNorm of [1.34, 0.64, 0.81, 1.20] (torch, eps 1e-5), plain and with gamma/beta")
row = torch.tensor([1.34, 0.64, 0.81, 1.20], dtype=torch.float64)
print(repr(torch.nn.functional.layer_norm(row, (4,), eps=1e-5).numpy()))
gamma = torch.tensor([0.5, 1.0, 1.5, 2.0], dtype=torch.float64)
beta = torch.tensor([0.1, 0.0, -0.1, 0.2], dtype=torch.float64)
print(repr(torch.nn.functional.layer_norm(row, (4,), gamma, beta, eps=1e-5).numpy()))
print("mean", repr(row.mean().item()), "biased var", repr(row.var(unbiased=False).item()))

print("# sinusoidal PE(pos) for d_model 4, seed 004's formula")
def pe(pos, d_model):
    out = np.zeros(d_model)
    for i in range(0, d_model, 2):
        divisor = 10000 ** (i / d_model)
        out[i] = np.sin(pos / divisor)
        out[i + 1] = np.cos(pos / divisor)
    return out
for pos in range(6):
    print(pos, repr(pe(pos, 4)))

print("# seed 000 'what happens internally': X[0,0] @ W column 0")
W = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2], [1.3, 1.4, 1.5, 1.6]])
x00 = np.array([-1.5116, 1.5644, 2.1816, 3.3755])
print("products", repr(x00 * W[:, 0]), "sum", repr(x00 @ W[:, 0]))

print("# groups printed with floatmode='maxprec_equal' (what format_number_group follows)")
for values, precision in [([0.134, 0.32, 0.162, 0.48], 4), ([1.34, 0.64, 0.81, 1.2], 4),
                          ([np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)], 3), ([-0.55, -0.84, 0.0], 4),
                          ([2.0, 100.0], 4), ([0.99995], 4)]:
    print(values, precision, np.array2string(np.array(values), precision=precision, floatmode="maxprec_equal",
                                             separator=", "))

print("# the same LayerNorm rows and softmax weights to 8 digits")
np.set_printoptions(precision=8)
print(repr(torch.nn.functional.layer_norm(row, (4,), eps=1e-5).numpy()))
print(repr(torch.nn.functional.layer_norm(row, (4,), gamma, beta, eps=1e-5).numpy()))
print(repr(torch.softmax(torch.tensor([1.90, 1.61, 2.45], dtype=torch.float64), 0).numpy()))
