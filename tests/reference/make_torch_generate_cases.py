#!/usr/bin/env python3
"""Writes torch_generate/<case>.json (an attn decoder-only model file) and
torch_generate/<case>.expected.json: greedy generation of several tokens by PyTorch float64,
the token ids and every step's next-token logits.

The model is GPT-2's architecture: nn.TransformerEncoderLayer blocks with norm_first=True
under a causal mask and GPT-2's tanh approximation of GELU (F.gelu(x, approximate="tanh"),
attn's "gelu_tanh", given to the module as its activation), in an nn.TransformerEncoder with a
final LayerNorm (ln_f), learned positions, the output head tied to the embedding. Each step runs the module
over the whole prefix (no cache), takes the last position's logits, leaves out the tokens attn
never writes (<PAD>, <UNK>, <BOS>: their logits -inf) and appends the argmax; it stops after
<EOS> or max_new_tokens. A second loop with a KV cache written by hand (the keys and values of
every layer kept, one new row per step) must give the same logits to 1e-12: the same cache
bench/generate times.

Run once with Debian's python3-torch; tests/forward/torch_generate_reference_test.cpp reads
the output (make_torch_llama_generate_cases.py appends its Llama-style cases):
    /usr/bin/python3 tests/reference/make_torch_generate_cases.py
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import make_torch_transformer_cases as T

torch.set_default_dtype(torch.float64)
DT = torch.float64
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_generate")
VOCAB = ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big", "red", "."]
NEVER = [0, 1, 2]


def gelu_tanh(x):
    """GPT-2's GELU: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    return F.gelu(x, approximate="tanh")

CASES = [
    dict(name="gpt_greedy_two_layers", N=8, H=2, F=16, layers=2, max_len=24, prompt=["<BOS>", "the", "cat"],
         max_new_tokens=8, seed=6),
    dict(name="gpt_greedy_one_layer_h4", N=12, H=4, F=20, layers=1, max_len=16, prompt=["<BOS>", "a"],
         max_new_tokens=6, seed=25),
]


class Gpt(nn.Module):
    def __init__(self, c):
        super().__init__()
        N = c["N"]
        self.embedding = nn.Parameter(torch.randn(len(VOCAB), N))
        self.positions = nn.Parameter(torch.randn(c["max_len"], N) * 0.5)
        layer = nn.TransformerEncoderLayer(N, c["H"], c["F"], dropout=0.0, activation=gelu_tanh, batch_first=True,
                                           norm_first=True, dtype=DT)
        self.ln_f = nn.LayerNorm(N)
        self.blocks = nn.TransformerEncoder(layer, c["layers"], norm=self.ln_f, enable_nested_tensor=False)
        for block in self.blocks.layers:
            T.randomize_encoder_layer(block, N)
        T.randomize_norm(self.ln_f)
        self.eval()

    def forward(self, ids):
        S = ids.shape[1]
        x = self.embedding[ids] + self.positions[:S]
        mask = nn.Transformer.generate_square_subsequent_mask(S).to(DT)
        return F.linear(self.blocks(x, mask=mask), self.embedding)


def cached_logits(model, c, ids):
    """The same logits with a KV cache: each layer's keys and values kept, one row per step."""
    N, H = c["N"], c["H"]
    d = N // H
    caches = [([], []) for _ in model.blocks.layers]
    out = []
    for t, token in enumerate(ids):
        x = model.embedding[token] + model.positions[t]  # (N,)
        for (ks, vs), block in zip(caches, model.blocks.layers):
            a = block.self_attn
            h = block.norm1(x)
            q, k, v = (h @ a.in_proj_weight.T + a.in_proj_bias).split(N)
            ks.append(k.view(H, d))
            vs.append(v.view(H, d))
            K, V = torch.stack(ks, 1), torch.stack(vs, 1)  # (H, t+1, d)
            w = torch.softmax((K @ q.view(H, d, 1)).squeeze(-1) / math.sqrt(d), dim=-1)  # (H, t+1)
            ctx = (w.unsqueeze(1) @ V).reshape(N)
            x = x + a.out_proj(ctx)
            h = block.norm2(x)
            x = x + block.linear2(gelu_tanh(block.linear1(h)))
        out.append(F.linear(model.ln_f(x), model.embedding))
    return out


def make_case(c):
    torch.manual_seed(c["seed"])
    model = Gpt(c)
    ids = [VOCAB.index(t) for t in c["prompt"]]
    steps = []
    with torch.no_grad():
        for _ in range(c["max_new_tokens"]):
            logits = model(torch.tensor([ids]))[0, -1]
            masked = logits.clone()
            masked[NEVER] = -math.inf
            token = int(torch.argmax(masked))
            steps.append({"logits": logits.tolist(), "id": token, "token": VOCAB[token]})
            if VOCAB[token] == "<EOS>":
                break
            ids.append(token)
        # the hand-written cache gives the same logits
        cached = cached_logits(model, c, ids)
        for i, s in enumerate(steps):
            at = len(c["prompt"]) - 1 + i
            diff = float((cached[at] - torch.tensor(s["logits"])).abs().max())
            assert diff <= 1e-12 * float(torch.tensor(s["logits"]).abs().max()), diff
    doc = {
        "comment": f"Generated by tests/reference/make_torch_generate_cases.py: {c['name']}, a decoder-only "
                   f"(GPT-2 style) model whose greedy generation PyTorch {torch.__version__} float64 computed",
        "model": {"architecture": "decoder-only", "d_model": c["N"], "num_heads": c["H"], "d_ff": c["F"],
                  "num_layers": c["layers"], "norm_first": True, "activation": "gelu_tanh",
                  "positional_encoding": "learned", "max_len": c["max_len"]},
        "vocab": VOCAB,
        "embedding": T.nested(model.embedding),
        "positions": T.nested(model.positions),
        "input": {"tokens": c["prompt"]},
        "decoder": [{"self_attention": j["attention"], "norm1": j["norm1"], "ffn": j["ffn"], "norm2": j["norm2"]}
                    for j in (T.encoder_layer_json(block, c["N"]) for block in model.blocks.layers)],
        "decoder_norm": T.norm_json(model.ln_f),
        "output": "tied",
    }
    expected = {"case": c["name"], "prompt": c["prompt"], "max_new_tokens": c["max_new_tokens"], "steps": steps}
    return doc, expected


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    names = []
    for c in CASES:
        doc, expected = make_case(c)
        for suffix, content in ((".json", doc), (".expected.json", expected)):
            with open(os.path.join(OUT_DIR, c["name"] + suffix), "w") as f:
                json.dump(content, f, indent=None)
                f.write("\n")
        names.append(c["name"])
        print(c["name"], " ".join(s["token"] for s in expected["steps"]))
    listed = os.path.join(OUT_DIR, "cases.txt")
    others = []
    if os.path.exists(listed):  # the Llama-style cases of make_torch_llama_generate_cases.py stay
        with open(listed) as f:
            others = [n for n in f.read().split() if n not in names]
    with open(listed, "w") as f:
        f.write("\n".join(names + others) + "\n")


if __name__ == "__main__":
    main()
