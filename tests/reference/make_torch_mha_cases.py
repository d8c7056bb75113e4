#!/usr/bin/env python3
"""Writes torch_mha/<case>.json (an attn model file) and torch_mha/<case>.expected.json (every
tensor attn records for it, as PyTorch computes them) for random float64 cases.

Run once with Debian's python3-torch (1.13); the C++ test tests/torch_reference_test.cpp reads
the committed output, so the build never needs PyTorch:
    /usr/bin/python3 tests/reference/make_torch_mha_cases.py

The reference is torch.nn.MultiheadAttention(batch_first=True, dtype=torch.float64). attn uses
its weights as X @ W, PyTorch as x @ W.T, so
    in_proj_weight = [W_q^T; W_k^T; W_v^T],  in_proj_bias = [b_q; b_k; b_v],
    out_proj.weight = W_o^T,                 out_proj.bias = b_o.
"weights" and "output" are what the module itself returns (need_weights=True,
average_attn_weights=False). The intermediates the module does not return (q, k, v, the heads,
k_t, scores, scaled and masked scores, context, concat) are computed here with torch ops from
the same module's parameters, and the script asserts that they reproduce the module's weights
and output, so they are the module's own computation, not a second guess.

Expected-file format: {"case", "description", "batched", "tensors": [{"name", "shape",
"data"}]}, data flat in C order, full-precision doubles (Python's repr, shortest round trip);
non-finite values are the strings "-inf", "inf", "nan" because JSON has no literal for them.
"""
import math
import os

import torch
import torch.nn.functional as F

import torch_common as C
from torch_common import entry, nested

OUT_DIR = C.out_dir("torch_mha")

# name, B (None: unbatched (S, N) input), S, d_model, heads, bias, mask ("none", "float" or
# "bool", both causal), with W_o, biases left out of the model file (zeroed in torch).
CASES = [
    dict(name="b2_h4_n8_s5_bias", B=2, S=5, N=8, H=4, bias=True, mask="none", w_o=True),
    dict(name="b3_h4_n12_s3_nobias", B=3, S=3, N=12, H=4, bias=False, mask="none", w_o=True),
    dict(name="unbatched_h4_n16_s7_bias", B=None, S=7, N=16, H=4, bias=True, mask="none", w_o=True),
    dict(name="b2_h1_n8_s4_causal_float", B=2, S=4, N=8, H=1, bias=False, mask="float", w_o=True),
    dict(name="unbatched_h1_n11_s6_causal_bool_bias", B=None, S=6, N=11, H=1, bias=True, mask="bool", w_o=True),
    dict(name="b3_h4_n12_s7_causal_bias", B=3, S=7, N=12, H=4, bias=True, mask="float", w_o=True),
    dict(name="b2_h4_n16_s1_causal_bool_bias", B=2, S=1, N=16, H=4, bias=True, mask="bool", w_o=True),
    dict(name="unbatched_h1_n8_s1_nobias", B=None, S=1, N=8, H=1, bias=False, mask="none", w_o=True),
    dict(name="b2_h4_n8_s6_bias_no_wo", B=2, S=6, N=8, H=4, bias=True, mask="none", w_o=False),
    dict(name="unbatched_h1_n9_s3_causal_no_wo", B=None, S=3, N=9, H=1, bias=False, mask="float", w_o=False),
    dict(name="unbatched_h2_n10_s5_partial_bias", B=None, S=5, N=10, H=2, bias=True, mask="none", w_o=True,
         omit=["b_k", "b_o"]),
]

# Manual intermediates must reproduce the module's weights and output to this (relative) bound.
AGREEMENT = 1e-13


def assert_agree(name, mine, module):
    both_inf = torch.isinf(mine) & torch.isinf(module) & (torch.sign(mine) == torch.sign(module))
    diff = torch.where(both_inf, torch.zeros_like(mine), (mine - module).abs())
    bound = AGREEMENT * torch.clamp(module.abs(), min=1.0)
    assert bool((diff <= bound).all()), f"{name}: manual and module values differ by {diff.max().item()}"


def make_case(index, c):
    torch.manual_seed(1000 + index)
    B, S, N, H = c["B"], c["S"], c["N"], c["H"]
    d = N // H
    omit = set(c.get("omit", []))

    mha = torch.nn.MultiheadAttention(N, H, bias=c["bias"], batch_first=True, dtype=torch.float64)
    # Random parameters of a size that keeps the softmax away from one-hot, so the weights are
    # a real test; PyTorch's own init leaves the biases at zero, so draw them too.
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.randn(3 * N, N, dtype=torch.float64) * (1.5 / math.sqrt(N)))
        mha.out_proj.weight.copy_(torch.randn(N, N, dtype=torch.float64) * (1.0 / math.sqrt(N)))
        if c["bias"]:
            mha.in_proj_bias.copy_(torch.randn(3 * N, dtype=torch.float64) * 0.5)
            mha.out_proj.bias.copy_(torch.randn(N, dtype=torch.float64) * 0.5)
            # A bias left out of attn's model file is zero in torch: X @ W + 0 == X @ W.
            if "b_q" in omit:
                mha.in_proj_bias[:N].zero_()
            if "b_k" in omit:
                mha.in_proj_bias[N:2 * N].zero_()
            if "b_v" in omit:
                mha.in_proj_bias[2 * N:].zero_()
            if "b_o" in omit:
                mha.out_proj.bias.zero_()

    x = torch.randn(*((S, N) if B is None else (B, S, N)), dtype=torch.float64)

    causal = c["mask"] != "none"
    upper = torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1)  # True above the diagonal
    float_mask = torch.zeros(S, S, dtype=torch.float64).masked_fill(upper, float("-inf"))
    attn_mask = {"none": None, "float": float_mask, "bool": upper}[c["mask"]]

    with torch.no_grad():
        module_out, module_weights = mha(x, x, x, attn_mask=attn_mask, need_weights=True,
                                         average_attn_weights=False)

        # The same computation, step by step, on (B, S, N) (unbatched input as B = 1).
        xb = x if B is not None else x.unsqueeze(0)
        Bb = xb.shape[0]
        W = mha.in_proj_weight
        bias = mha.in_proj_bias
        w_q, w_k, w_v = W[:N], W[N:2 * N], W[2 * N:]
        b_q, b_k, b_v = (None, None, None) if bias is None else (bias[:N], bias[N:2 * N], bias[2 * N:])
        q = F.linear(xb, w_q, b_q)                                   # (B,S,N) @ (N,H*d) -> (B,S,H*d)
        k = F.linear(xb, w_k, b_k)
        v = F.linear(xb, w_v, b_v)
        q_heads = q.view(Bb, S, H, d).transpose(1, 2)                # (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
        k_heads = k.view(Bb, S, H, d).transpose(1, 2)
        v_heads = v.view(Bb, S, H, d).transpose(1, 2)
        k_t = k_heads.transpose(-2, -1)                              # (B,H,S,d) -> (B,H,d,S)
        scores = q_heads @ k_t                                       # (B,H,S,d) @ (B,H,d,S) -> (B,H,S,S)
        scaled = scores / math.sqrt(d)
        masked = scaled + float_mask if causal else None
        manual_weights = torch.softmax(masked if causal else scaled, dim=-1)
        weights_b = module_weights if B is not None else module_weights.unsqueeze(0)
        assert_agree("weights", manual_weights, weights_b)
        context = weights_b @ v_heads                                # (B,H,S,S) @ (B,H,S,d) -> (B,H,S,d)
        concat = context.transpose(1, 2).reshape(Bb, S, N)           # (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
        output = F.linear(concat, mha.out_proj.weight, mha.out_proj.bias)  # (B,S,H*d) @ (H*d,N) -> (B,S,N)
        assert_agree("output", output, module_out if B is not None else module_out.unsqueeze(0))

    def rec(t):  # as attn records it: no B axis for unbatched input
        return t if B is not None else t.squeeze(0)

    p = "encoder.0.attention."
    tensors = [entry("input", x)]
    if causal:
        tensors.append(entry("encoder.mask", float_mask))
    # attn records each projection's product, then its bias (when the file gives it) as a step of its own
    for name, w, t in (("q", w_q, q), ("k", w_k, k), ("v", w_v, v)):
        tensors.append(entry(p + name, rec(F.linear(xb, w))))
        if c["bias"] and "b_" + name not in omit:
            tensors.append(entry(p + name + "_biased", rec(t)))
    tensors += [entry(p + "q_heads", rec(q_heads)), entry(p + "k_heads", rec(k_heads)),
                entry(p + "v_heads", rec(v_heads)), entry(p + "k_t", rec(k_t)),
                entry(p + "scores", rec(scores)), entry(p + "scaled_scores", rec(scaled))]
    if causal:
        tensors.append(entry(p + "masked_scores", rec(masked)))
    tensors += [entry(p + "weights", module_weights), entry(p + "context", rec(context)),
                entry(p + "concat", rec(concat))]
    if c["w_o"]:
        tensors.append(entry(p + "output", module_out))

    attention = {"W_q": nested(w_q.T), "W_k": nested(w_k.T), "W_v": nested(w_v.T)}
    if c["w_o"]:
        attention["W_o"] = nested(mha.out_proj.weight.T)
    if c["bias"]:
        for key, b in (("b_q", b_q), ("b_k", b_k), ("b_v", b_v)):
            if key not in omit:
                attention[key] = nested(b)
        if c["w_o"] and "b_o" not in omit:
            attention["b_o"] = nested(mha.out_proj.bias)

    description = (f"torch.nn.MultiheadAttention({N}, {H}, bias={c['bias']}, batch_first=True, float64); "
                   f"input {'(B=%d,S=%d,N=%d)' % (B, S, N) if B is not None else '(S=%d,N=%d) unbatched' % (S, N)}; "
                   f"mask: {c['mask'] if causal else 'none'}{' (causal)' if causal else ''}; "
                   f"{'W_o' if c['w_o'] else 'no W_o (compared before out_proj)'}"
                   f"{'; biases left out (zero in torch): ' + ', '.join(sorted(omit)) if omit else ''}")
    model = {
        "comment": "Generated by tests/reference/make_torch_mha_cases.py: " + description,
        "model": {"d_model": N, "num_heads": H, "causal": causal},
        "input": {"X": nested(x)},
        "encoder": [{"attention": attention}],
    }
    expected = {"case": c["name"], "description": description, "batched": B is not None, "tensors": tensors}
    return model, expected


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    names = []
    for i, c in enumerate(CASES):
        model, expected = make_case(i, c)
        C.write_json(os.path.join(OUT_DIR, c["name"] + ".json"), model, indent=1)
        C.write_json(os.path.join(OUT_DIR, c["name"] + ".expected.json"), expected)
        names.append(c["name"])
    C.write_case_list(OUT_DIR, names)
    print(f"wrote {len(names)} cases to {OUT_DIR} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
