#!/usr/bin/env python3
"""attn train against PyTorch on the same model, data, batches and steps (bench/train runs it).

Builds an encoder-decoder of torch.nn's modules (nn.TransformerEncoderLayer +
nn.TransformerDecoderLayer, a linear head; tests/reference/make_torch_train_cases.py's Model),
writes it as an attn model file and its training examples as JSON Lines, then times, in one
run, interleaved, best of --repeat:
  - attn train -c model.json --data data.jsonl --no-shuffle ... (the whole process: loading,
    training, writing the trained file);
  - PyTorch float64: the same steps with torch.optim.Adam (foreach=False) and clip_grad_norm_,
    the batches padded and masked as attn pads them (the training loop alone, no loading);
  - PyTorch float32: the same, in float32.
and checks that attn's trained weights equal PyTorch float64's to 1e-9 of each tensor's
largest value (b_k, whose gradient is rounding noise, excepted as in the reference test).
Prints the ratios attn / PyTorch.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import make_torch_train_cases as R  # noqa: E402


def examples(n, seed):
    rng = random.Random(seed)
    words = R.VOCAB[3:]
    out = []
    for _ in range(n):
        src = [rng.choice(words) for _ in range(rng.randint(3, 8))]
        out_words = list(reversed(src))
        out.append((src, ["<BOS>"] + out_words[:-1], out_words))
    return out


def torch_train(case, data, dtype, steps_out=None):
    torch.set_default_dtype(dtype)
    R.DT = dtype
    torch.manual_seed(5000)
    model = R.Model(case)
    model.module.to(dtype)
    params = model.parameters()
    optimizer = R.optimizer_of(case, params)
    R.EXAMPLES[:] = data
    order = R.batches(case)
    start = time.perf_counter()
    for step in range(1, case["steps"] + 1):
        optimizer.zero_grad()
        loss = model.loss(next(order))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, case["clip"])
        for group in optimizer.param_groups:
            group["lr"] = R.learning_rate(case, step, case["N"])
        optimizer.step()
    elapsed = time.perf_counter() - start
    return model, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--d-model", type=int, default=32)
    args = ap.parse_args()
    threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    case = dict(name="bench", kind="layers", N=args.d_model, H=4, F=2 * args.d_model, act="relu", norm_first=False,
                output="linear", optimizer="adam", lr=1e-3, weight_decay=0.0, schedule="cosine", warmup=20, clip=1.0,
                steps=args.steps, batch_size=32)
    data = examples(256, 1)
    R.EXAMPLES[:] = data
    torch.set_default_dtype(torch.float64)
    R.DT = torch.float64
    torch.manual_seed(5000)
    doc = R.Model(case).document("bench/torch_train_reference.py")
    os.makedirs(args.out, exist_ok=True)
    model_path, data_path = os.path.join(args.out, "train-model.json"), os.path.join(args.out, "train-data.jsonl")
    with open(model_path, "w") as f:
        json.dump(doc, f)
    with open(data_path, "w") as f:
        for src, tgt, labels in data:
            f.write(json.dumps({"tokens": src, "target_tokens": tgt, "labels": labels}) + "\n")
    trained = os.path.join(args.out, "train-attn.json")
    command = [args.attn, "train", "-c", model_path, "--data", data_path, "-o", trained, "-f", "-q", "--no-shuffle",
               "--steps", str(case["steps"]), "--batch-size", "32", "--optimizer", "adam", "--lr", "0.001",
               "--schedule", "cosine", "--warmup", "20", "--clip", "1"]
    best = {"attn": math.inf, "torch64": math.inf, "torch32": math.inf}
    reference = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True)
        best["attn"] = min(best["attn"], time.perf_counter() - start)
        reference, t64 = torch_train(case, data, torch.float64)
        best["torch64"] = min(best["torch64"], t64)
        _, t32 = torch_train(case, data, torch.float32)
        best["torch32"] = min(best["torch32"], t32)
    torch.set_default_dtype(torch.float64)
    mine = json.load(open(trained))
    worst = 0.0
    for name, t in reference.named_weights():
        node = mine
        for part in name.split("."):
            node = node[int(part)] if part.isdigit() else node[part]
        a = torch.tensor(node, dtype=torch.float64).reshape(-1)
        b = t.detach().to(torch.float64).reshape(-1)
        err = float((a - b).abs().max()) / float(b.abs().max())
        if not name.endswith(".b_k"):
            worst = max(worst, err)
    print(f"model: encoder-decoder, d_model {case['N']}, 4 heads, d_ff {case['F']}, 1 layer each; 256 examples of "
          f"3-8 tokens, batches of 32, {case['steps']} Adam steps (clip 1, cosine), {threads} threads, best of "
          f"{args.repeat}")
    print(f"attn train (whole process)   {best['attn']:.3f} s")
    print(f"PyTorch float64 (loop only)  {best['torch64']:.3f} s")
    print(f"PyTorch float32 (loop only)  {best['torch32']:.3f} s")
    print(f"attn / PyTorch float64       {best['attn'] / best['torch64']:.3f}   (target <= 0.25)")
    print(f"attn / PyTorch float32       {best['attn'] / best['torch32']:.3f}")
    print(f"weights vs PyTorch float64   worst {worst:.2e} of a tensor's largest value (target <= 1e-9)")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
