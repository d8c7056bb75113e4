#!/usr/bin/python3
"""The encoder forward pass of an `attn init` model file, in NumPy: the benchmark's reference.

It computes what `attn explain -c MODEL` computes, float64, keeping every intermediate
under attn's trace name (docs/trace-names.md), as a notebook that wants to look at every
step would: the same randn weights (np.random.seed, drawn in attn's order: X first, then
per layer W_q, W_k, W_v, W_o, W_1, W_2), post-norm layers, ReLU, LayerNorm eps 1e-5.

  numpy_reference.py MODEL [--json-dump FILE] [--compare ATTN.npz]
  numpy_reference.py MODEL --products-only

Prints one JSON line of timings (seconds): import, weights, forward, json_dump, and with
--compare the largest difference between its tensors and attn's .npz dump of the run.
--products-only times just the forward's matrix products (dgemm, through NumPy's BLAS) on
arrays of the same sizes, best of 3, and prints their FLOP count and GFLOP/s: the speed
the machine's BLAS reaches on the products attn runs.
Only the model files `attn init` writes are understood (X randn, "encoder": "randn").
"""
import argparse
import json
import os
import sys
import time

started = time.perf_counter()
import numpy as np  # noqa: E402

imported = time.perf_counter()


def layer_norm(x, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)  # gamma = 1, beta = 0


def draw(model):
    """The weights and X, drawn from one legacy stream in attn's documented order."""
    m = model["model"]
    N, H, L, F = m["d_model"], m["num_heads"], m.get("num_layers", 1), m.get("d_ff", 0)
    d = m.get("d_head", N // H)
    np.random.seed(m.get("seed", 0))
    shape = model["input"]["X"]["randn"]
    x = np.random.randn(*shape)
    if x.ndim == 2:
        x = x[np.newaxis]  # attn computes one sequence as B = 1
    layers = []
    for _ in range(L):
        w = {k: np.random.randn(N, H * d) for k in ("W_q", "W_k", "W_v")}
        w["W_o"] = np.random.randn(H * d, N)
        if F:
            w["W_1"] = np.random.randn(N, F)
            w["W_2"] = np.random.randn(F, N)
        layers.append(w)
    return x, layers, H, d, m.get("layer_norm_eps", 1e-5)


def forward(x, layers, H, d, eps):
    """Every intermediate, in attn's order and under attn's names."""
    t = {"input": x}
    B, S, N = x.shape
    for i, w in enumerate(layers):
        p = f"encoder.{i}."
        a = p + "attention."
        q = t[a + "q"] = x @ w["W_q"]
        k = t[a + "k"] = x @ w["W_k"]
        v = t[a + "v"] = x @ w["W_v"]
        qh = t[a + "q_heads"] = q.reshape(B, S, H, d).transpose(0, 2, 1, 3)
        kh = t[a + "k_heads"] = k.reshape(B, S, H, d).transpose(0, 2, 1, 3)
        vh = t[a + "v_heads"] = v.reshape(B, S, H, d).transpose(0, 2, 1, 3)
        kt = t[a + "k_t"] = kh.transpose(0, 1, 3, 2)
        scores = t[a + "scores"] = qh @ kt
        scaled = t[a + "scaled_scores"] = scores / np.sqrt(d)
        e = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
        weights = t[a + "weights"] = e / e.sum(axis=-1, keepdims=True)
        context = t[a + "context"] = weights @ vh
        concat = t[a + "concat"] = context.transpose(0, 2, 1, 3).reshape(B, S, H * d)
        out = t[a + "output"] = concat @ w["W_o"]
        if "W_1" not in w:
            x = out
            continue
        r1 = t[p + "residual1"] = x + out
        x1 = t[p + "add_norm1"] = layer_norm(r1, eps)
        hidden = t[p + "ffn.hidden"] = np.maximum(x1 @ w["W_1"], 0)
        f = t[p + "ffn.output"] = hidden @ w["W_2"]
        r2 = t[p + "residual2"] = x1 + f
        x = t[p + "add_norm2"] = layer_norm(r2, eps)
        t[p + "output"] = x
    return t


def product_flops(S, N, H, d, F, L):
    """Floating-point operations (2 per multiply-add) of the forward's matrix products."""
    per_layer = 2 * (4 * S * N * H * d + 2 * H * S * S * d + 2 * S * N * F)
    return per_layer * L


def products_only(x, layers, H, d):
    """The forward's products alone (no softmax, norms or copies kept), best of 3."""
    B, S, N = x.shape
    qh = np.ascontiguousarray(np.random.randn(B, H, S, d))
    kt = np.ascontiguousarray(np.random.randn(B, H, d, S))
    vh = np.ascontiguousarray(np.random.randn(B, H, S, d))
    weights = np.random.rand(B, H, S, S)
    x1 = np.random.randn(B, S, N)
    best = float("inf")
    for _ in range(int(os.environ.get("NUMPY_REFERENCE_REPEAT", "3"))):
        start = time.perf_counter()
        for w in layers:
            for name in ("W_q", "W_k", "W_v"):
                _ = x1 @ w[name]
            _ = qh @ kt  # scores
            _ = weights @ vh  # context
            _ = x1 @ w["W_o"]
            if "W_1" in w:
                hidden = x1 @ w["W_1"]
                _ = hidden @ w["W_2"]
        best = min(best, time.perf_counter() - start)
    return best


def json_dump(tensors, model, path, unbatched):
    """attn's dump format, through Python's json module (the whole document, then dump)."""
    doc = {"format": "attn-trace", "version": 1, "model": model["model"], "tensors": []}
    for name, value in tensors.items():
        if unbatched:
            value = value[0]
        doc["tensors"].append({"name": name, "shape": list(value.shape), "data": value.tolist()})
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--json-dump", metavar="FILE")
    parser.add_argument("--compare", metavar="ATTN_NPZ")
    parser.add_argument("--products-only", action="store_true")
    args = parser.parse_args()
    with open(args.model) as f:
        model = json.load(f)
    unbatched = len(model["input"]["X"]["randn"]) == 2

    result = {"import": imported - started}
    t0 = time.perf_counter()
    x, layers, H, d, eps = draw(model)
    t1 = time.perf_counter()
    if args.products_only:
        B, S, N = x.shape
        F = layers[0]["W_1"].shape[1] if "W_1" in layers[0] else 0
        flops = B * product_flops(S, N, H, d, F, len(layers))
        seconds = products_only(x, layers, H, d)
        result.update(weights=t1 - t0, products=seconds, flops=flops, gflops=flops / seconds / 1e9)
        print(json.dumps(result))
        return
    tensors = forward(x, layers, H, d, eps)
    t2 = time.perf_counter()
    result.update(weights=t1 - t0, forward=t2 - t1, tensors=len(tensors),
                  numbers=int(sum(v.size for v in tensors.values())))
    if args.json_dump:
        json_dump(tensors, model, args.json_dump, unbatched)
        result["json_dump"] = time.perf_counter() - t2
    if args.compare:
        theirs = np.load(args.compare)
        worst, worst_name = 0.0, ""
        for name, value in tensors.items():
            mine = value[0] if unbatched else value
            other = theirs[name]
            if other.shape != mine.shape:
                sys.exit(f"{name}: shape {other.shape} in {args.compare}, {mine.shape} here")
            # relative to the tensor's own scale, so huge scores and tiny weights compare alike
            scale = max(np.abs(mine).max(), 1e-300)
            diff = float(np.abs(other - mine).max() / scale)
            if diff > worst:
                worst, worst_name = diff, name
        missing = sorted(set(theirs.files) - set(tensors) - {"__meta__.json"})
        result.update(max_relative_difference=worst, worst_tensor=worst_name, only_in_attn=missing)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
