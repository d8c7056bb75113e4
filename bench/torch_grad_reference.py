#!/usr/bin/python3
"""The forward and backward pass of an `attn init` model file in PyTorch (float64): the
reference of bench/grad.

It computes what `attn grad -c MODEL` computes: the same randn weights (np.random.seed, drawn in
attn's order: X, then per layer W_q, W_k, W_v, W_o, W_1, W_2, then input.output_grad last),
post-norm encoder layers, ReLU, LayerNorm (gamma 1, beta 0 as parameters, eps from the file),
the loss sum(output * output_grad), and loss.backward() for every weight, gamma and beta and X.
Written in X @ W form with torch ops, as a PyTorch user training such a model would.

  torch_grad_reference.py MODEL [--threads N] [--repeat N] [--compare ATTN.npz]

Prints one JSON line: the best forward and backward times (seconds) of --repeat runs, the
loss, and with --compare the largest difference between its gradients and attn's .npz dump,
relative to each tensor's largest value.
"""
import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F


def draw(model):
    m = model["model"]
    N, H, L, Fw = m["d_model"], m["num_heads"], m.get("num_layers", 1), m.get("d_ff", 0)
    d = m.get("d_head", N // H)
    np.random.seed(m.get("seed", 0))
    x = np.random.randn(*model["input"]["X"]["randn"])
    if x.ndim == 2:
        x = x[np.newaxis]
    layers = []
    for _ in range(L):
        w = {k: np.random.randn(N, H * d) for k in ("W_q", "W_k", "W_v")}
        w["W_o"] = np.random.randn(H * d, N)
        w["W_1"] = np.random.randn(N, Fw)
        w["W_2"] = np.random.randn(Fw, N)
        layers.append(w)
    g = np.random.randn(*x.shape)  # output_grad, drawn after every weight
    return x, layers, g, H, d, m.get("layer_norm_eps", 1e-5)


def forward(x, params, H, d, eps):
    B, S, N = x.shape
    for p in params:
        q = (x @ p["W_q"]).view(B, S, H, d).transpose(1, 2)
        k = (x @ p["W_k"]).view(B, S, H, d).transpose(1, 2)
        v = (x @ p["W_v"]).view(B, S, H, d).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / np.sqrt(d), dim=-1)
        concat = (weights @ v).transpose(1, 2).reshape(B, S, H * d)
        x = F.layer_norm(x + concat @ p["W_o"], (N,), p["gamma1"], p["beta1"], eps)
        x = F.layer_norm(x + torch.relu(x @ p["W_1"]) @ p["W_2"], (N,), p["gamma2"], p["beta2"], eps)
    return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = json.load(open(args.model))
    x_np, layers, g_np, H, d, eps = draw(model)
    N = x_np.shape[-1]
    best_forward = best_backward = float("inf")
    for _ in range(args.repeat):
        x = torch.tensor(x_np, dtype=torch.float64, requires_grad=True)
        params = []
        for w in layers:
            p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
            for n in ("1", "2"):
                p["gamma" + n] = torch.ones(N, dtype=torch.float64, requires_grad=True)
                p["beta" + n] = torch.zeros(N, dtype=torch.float64, requires_grad=True)
            params.append(p)
        g = torch.tensor(g_np, dtype=torch.float64)
        started = time.perf_counter()
        loss = (forward(x, params, H, d, eps) * g).sum()
        middle = time.perf_counter()
        loss.backward()
        ended = time.perf_counter()
        best_forward = min(best_forward, middle - started)
        best_backward = min(best_backward, ended - middle)
    result = {"forward": best_forward, "backward": best_backward, "loss": float(loss),
              "threads": torch.get_num_threads(), "torch": torch.__version__}
    if args.compare:
        dump = np.load(args.compare)
        names = {"grad.input": x.grad[0] if "grad.input" in dump and dump["grad.input"].ndim == 2 else x.grad}
        for i, p in enumerate(params):
            for k in ("W_q", "W_k", "W_v", "W_o"):
                names[f"grad.encoder.{i}.attention.{k}"] = p[k].grad
            for k in ("W_1", "W_2"):
                names[f"grad.encoder.{i}.ffn.{k}"] = p[k].grad
            for n in ("1", "2"):
                names[f"grad.encoder.{i}.norm{n}.gamma"] = p["gamma" + n].grad
                names[f"grad.encoder.{i}.norm{n}.beta"] = p["beta" + n].grad
        worst, worst_name = 0.0, ""
        for name, t in names.items():
            ours = t.numpy()
            scale = max(np.abs(ours).max(), 1e-300)
            diff = float(np.abs(dump[name] - ours).max() / scale)
            if diff > worst:
                worst, worst_name = diff, name
        result["max_relative_difference"] = worst
        result["worst_tensor"] = worst_name
        result["loss_difference"] = abs(float(dump["loss"]) - float(loss)) / max(1.0, abs(float(loss)))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
