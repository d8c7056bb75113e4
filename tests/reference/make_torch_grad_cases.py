#!/usr/bin/env python3
"""Writes torch_grad/<case>.json (an attn model file with input.labels or input.output_grad) and
torch_grad/<case>.expected.json (the loss and every gradient `attn grad` records for it, in
attn's order, as PyTorch's autograd computes them, float64).

Run once with Debian's python3-torch (1.13); the C++ test tests/backward/torch_grad_reference_test.cpp
reads the committed output, so the build never needs PyTorch:
    /usr/bin/python3 tests/reference/make_torch_grad_cases.py

How the references are made:
- Every case's forward pass is written here with torch ops, one tensor per attn trace entry
  (docs/trace-names.md), each kept with retain_grad(); the loss is F.cross_entropy(logits,
  labels, ignore_index=<PAD>) with an output head, or (output * output_grad).sum() without
  one; loss.backward() then gives dL/d(every entry) and dL/d(every weight).
- The whole-transformer cases take their parameters from torch.nn modules
  (nn.TransformerEncoderLayer, nn.TransformerEncoder, nn.TransformerDecoderLayer,
  nn.Transformer; float64, batch_first, dropout 0, train() mode, as
  make_torch_transformer_cases.py explains), read through views in attn's X @ W layout
  (W_q = in_proj_weight[:N].T, ...). The script then runs the modules' own forward on the same
  embeddings with the same loss and asserts that it gives the same loss and the same gradient
  for every module parameter, the embedding and the positions (to 1e-12 of each tensor's
  largest value): the gradients are nn.Transformer's autograd gradients.
- The attention-only cases (numbers in, output_grad; per-head weights, d_head != d_model/H,
  a block without W_o) have no torch module; their parameters are leaf tensors.
- attn gives a query whose every key is masked zero weights where PyTorch's softmax gives NaN
  (docs/trace-names.md); the forward here does the same (the row's scores replaced by 0 before
  the softmax and its weights by 0 after), so such a row's gradients are 0, as attn's.
- grad.output.probabilities: dL/dp of the same loss written as -mean(log p[label]), by
  torch.autograd.grad on p (F.cross_entropy never forms p).

Expected-file format: {"case", "description", "batched", "tensors": [{"name", "shape", "data"}]},
"loss" first (shape []), then grad.<name> of every trace entry that has a gradient, the last
entry first, then grad.<weight path> in the model file's order; data flat in C order. Unbatched
cases are written without the B axis, as attn records them.
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import make_torch_transformer_cases as T
from torch_common import nested, number

torch.set_default_dtype(torch.float64)
DT = torch.float64
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_grad")
VOCAB, PAD = T.VOCAB, T.PAD
MODULE_AGREEMENT = 1e-12

# kind "attention": attention-only encoder layers over X (numbers) or tokens, output_grad.
#   layers: list of dicts {wo, biases, per_head}; d_head may differ from N / H.
# kinds "encoder_layer", "encoder", "encoder_decoder_layer", "transformer": as in
#   make_torch_transformer_cases.py; "labels" (with an output head) or "output_grad".
CASES = [
    dict(name="attn_unbatched_biases", kind="attention", N=6, H=2, X=(4,),
         layers=[dict(wo=True, biases=("b_q", "b_k", "b_v", "b_o"))]),
    dict(name="attn_batched_causal_two_layers", kind="attention", N=8, H=4, X=(2, 5), causal=True,
         layers=[dict(wo=True, biases=()), dict(wo=True, biases=("b_o",))]),
    dict(name="attn_per_head_dhead3_no_wo", kind="attention", N=4, H=2, d_head=3, X=(2, 3),
         layers=[dict(wo=True, biases=("b_q", "b_v", "b_o"), per_head=True), dict(wo=False, biases=("b_k",))]),
    dict(name="attn_unbatched_causal_h3_no_wo", kind="attention", N=6, H=3, X=(5,), causal=True,
         layers=[dict(wo=False, biases=("b_q",), per_head=True)]),
    dict(name="attn_padding_fully_masked_rows", kind="attention", N=4, H=2, causal=True,
         src=[["<PAD>", "cat", "sat"], ["dog"], ["the", "<PAD>", "mat"]],
         layers=[dict(wo=True, biases=("b_v", "b_o"))]),
    dict(name="enc_post_relu_padded_linear", kind="encoder_layer", N=8, H=2, F=12, act="relu", norm_first=False,
         src=[["the", "cat", "sat", "on"], ["big", "dog"]], output="linear",
         labels=[["cat", "sat", "<PAD>", "mat"], ["dog", "<PAD>"]]),
    dict(name="enc_pre_gelu_unbatched_tied_learned", kind="encoder_layer", N=6, H=3, F=10, act="gelu",
         norm_first=True, positions="learned", max_len=6, scale=True, src=["the", "red", "cat", "ran"],
         output="tied", labels=["red", "cat", "ran", "far"]),
    dict(name="enc_stack2_pre_final_norm_x_output_grad", kind="encoder", layers=2, final_norm=True, N=10, H=2, F=14,
         act="relu", norm_first=True, eps=1e-6, X=(2, 5), causal=True),
    dict(name="encdec_post_relu_padded_linear", kind="transformer", enc_layers=2, dec_layers=2, N=8, H=2, F=12,
         act="relu", norm_first=False, src=[["the", "big", "cat"], ["dog", "sat", "on", "the", "mat"], ["red"]],
         tgt=[["<BOS>", "cat"], ["<BOS>"], ["<BOS>", "the", "red", "dog"]], output="linear",
         labels=[["cat", "<PAD>"], ["sat"], ["the", "red", "dog", "ran"]]),
    dict(name="encdec_pre_gelu_causal_scaled_tied", kind="transformer", enc_layers=1, dec_layers=1, N=12, H=3, F=18,
         act="gelu", norm_first=True, causal=True, scale=True, eps=1e-4,
         src=[["on", "the", "mat"], ["cat", "ran"]], tgt=[["<BOS>", "the"], ["<BOS>", "big", "dog"]], output="tied",
         labels=[["the", "mat"], ["big", "dog", "<PAD>"]]),
    dict(name="encdec_layer_learned_unbatched", kind="encoder_decoder_layer", N=6, H=2, F=8, act="gelu",
         norm_first=False, positions="learned", max_len=5, src=["dog", "ran", "far", "on", "mat"],
         tgt=["<BOS>", "the", "dog"], output="linear", labels=["the", "dog", "ran"]),
    dict(name="encdec_h1_s1_unbatched", kind="transformer", enc_layers=1, dec_layers=1, N=4, H=1, F=6,
         act="relu", norm_first=False, src=["cat"], tgt=["<BOS>"], output="linear", labels=["cat"]),
    dict(name="encdec_three_layers_tied", kind="transformer", enc_layers=3, dec_layers=2, N=8, H=4, F=10,
         act="relu", norm_first=True, src=[["the", "cat", "sat"], ["a", "dog", "ran"]],
         tgt=[["<BOS>", "the", "cat"], ["<BOS>", "big", "dog"]], output="tied",
         labels=[["the", "cat", "sat"], ["big", "dog", "<PAD>"]]),
    # kind "gpt": a decoder-only (GPT-2 style) model, model.architecture "decoder-only": its layers
    # are nn.TransformerEncoderLayer(norm_first=True) blocks under a causal mask, in an
    # nn.TransformerEncoder with a final LayerNorm; learned positions; the head tied to the
    # embedding (or linear). The first is GPT-2's block: its activation is GPT-2's tanh
    # approximation of GELU (F.gelu(x, approximate="tanh"), the module's activation callable).
    dict(name="gpt_pre_gelu_tanh_learned_tied", kind="gpt", layers=2, N=8, H=2, F=16, act="gelu_tanh", norm_first=True,
         positions="learned", max_len=8, src=[["<BOS>", "the", "cat", "sat"], ["<BOS>", "big", "dog", "<PAD>"]],
         output="tied", labels=[["the", "cat", "sat", "on"], ["big", "dog", "ran", "<PAD>"]]),
    dict(name="gpt_unbatched_relu_linear", kind="gpt", layers=1, N=6, H=3, F=10, act="relu", norm_first=True,
         positions="learned", max_len=6, src=["<BOS>", "red", "cat", "ran", "far"], output="linear",
         labels=["red", "cat", "ran", "far", "on"]),
]




def assert_close(name, mine, other, bound=MODULE_AGREEMENT):
    assert mine.shape == other.shape, f"{name}: shapes {tuple(mine.shape)} and {tuple(other.shape)}"
    scale = max(float(other.abs().max()), 1e-300)
    diff = float((mine - other).abs().max())
    assert diff <= bound * scale, f"{name}: differs by {diff} (scale {scale})"


class Trace:
    """The forward's tensors in attn's order, each kept with retain_grad()."""

    def __init__(self, batched):
        self.batched = batched
        self.entries = []  # (name, tensor, batch_axis, has_gradient)

    def rec(self, name, t, batch_axis=True, gradient=True):
        if gradient and t.requires_grad:
            t.retain_grad()
        self.entries.append((name, t, batch_axis, gradient and t.requires_grad))
        return t

    def shaped(self, t, batch_axis):
        if not self.batched and batch_axis:
            assert t.shape[0] == 1
            return t.squeeze(0)
        return t


def layer_norm(x, p, eps):
    return F.layer_norm(x, (x.shape[-1],), p["gamma"], p["beta"], eps)


def linear(x, W, b):
    y = x @ W
    return y + b if b is not None else y


def projected(tr, name, x, W, b):
    """x @ W recorded as name ("...q"), then + b as name + "_biased" when the block has the bias."""
    y = tr.rec(name, x @ W)
    return tr.rec(name + "_biased", y + b) if b is not None else y


def attention(tr, prefix, x_q, x_kv, p, H, d, mask):
    """Multi-head attention as attn records it; p holds W_q, W_k, W_v (N,H*d), W_o, biases."""
    B, S, _ = x_q.shape
    Tk = x_kv.shape[1]
    q = projected(tr, prefix + "q", x_q, p["W_q"], p.get("b_q"))
    k = projected(tr, prefix + "k", x_kv, p["W_k"], p.get("b_k"))
    v = projected(tr, prefix + "v", x_kv, p["W_v"], p.get("b_v"))
    qh = tr.rec(prefix + "q_heads", q.view(B, S, H, d).transpose(1, 2))
    kh = tr.rec(prefix + "k_heads", k.view(B, Tk, H, d).transpose(1, 2))
    vh = tr.rec(prefix + "v_heads", v.view(B, Tk, H, d).transpose(1, 2))
    kt = tr.rec(prefix + "k_t", kh.transpose(-2, -1))
    scores = tr.rec(prefix + "scores", qh @ kt)
    x = tr.rec(prefix + "scaled_scores", scores / math.sqrt(d))
    if mask is not None:
        x = tr.rec(prefix + "masked_scores", x + (mask if mask.dim() == 2 else mask[:, None, :, :]))
    full = torch.isneginf(x).all(dim=-1, keepdim=True)  # every key masked: attn's zero weights
    weights = tr.rec(prefix + "weights", torch.softmax(x.masked_fill(full, 0.0), dim=-1).masked_fill(full, 0.0))
    context = tr.rec(prefix + "context", weights @ vh)
    concat = tr.rec(prefix + "concat", context.transpose(1, 2).reshape(B, S, H * d))
    if "W_o" not in p:
        return concat
    return tr.rec(prefix + "output", linear(concat, p["W_o"], p.get("b_o")))


# attn's model.activation -> the function, which the torch modules take as their activation too
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


def feed_forward(tr, prefix, x, p, act):
    pre = linear(x, p["W_1"], p.get("b_1"))
    hidden = tr.rec(prefix + "hidden", ACTIVATIONS[act](pre))
    return tr.rec(prefix + "output", linear(hidden, p["W_2"], p.get("b_2")))


def sublayer(tr, prefix, n, x, norm, c, f):
    """Post-norm LN(x + f(x)) or pre-norm x + f(LN(x)), as attn records it."""
    eps = c.get("eps", 1e-5)
    if c["norm_first"]:
        h = tr.rec(f"{prefix}norm{n}", layer_norm(x, norm, eps))
        return tr.rec(f"{prefix}residual{n}", x + f(h))
    r = tr.rec(f"{prefix}residual{n}", x + f(x))
    return tr.rec(f"{prefix}add_norm{n}", layer_norm(r, norm, eps))


def encoder_layer(tr, i, x, p, c, mask, H, d):
    pre = f"encoder.{i}."
    x1 = sublayer(tr, pre, 1, x, p["norm1"], c, lambda h: attention(tr, pre + "attention.", h, h, p["attention"], H, d,
                                                                   mask))
    x2 = sublayer(tr, pre, 2, x1, p["norm2"], c, lambda h: feed_forward(tr, pre + "ffn.", h, p["ffn"], c["act"]))
    return tr.rec(pre + "output", x2)


def decoder_layer(tr, j, y, memory, p, c, self_mask, cross_mask, H, d):
    pre = f"decoder.{j}."
    y1 = sublayer(tr, pre, 1, y, p["norm1"], c,
                  lambda h: attention(tr, pre + "self_attention.", h, h, p["self_attention"], H, d, self_mask))
    y2 = sublayer(tr, pre, 2, y1, p["norm2"], c,
                  lambda h: attention(tr, pre + "cross_attention.", h, memory, p["cross_attention"], H, d, cross_mask))
    y3 = sublayer(tr, pre, 3, y2, p["norm3"], c, lambda h: feed_forward(tr, pre + "ffn.", h, p["ffn"], c["act"]))
    return tr.rec(pre + "output", y3)


# --- parameters: views of torch modules (attn's layout) or leaves -----------------------------

def view(t):
    t.retain_grad()
    return t


def attention_from_module(mha, N):
    W, b = mha.in_proj_weight, mha.in_proj_bias
    return {"W_q": view(W[:N].T), "W_k": view(W[N:2 * N].T), "W_v": view(W[2 * N:].T),
            "W_o": view(mha.out_proj.weight.T), "b_q": view(b[:N]), "b_k": view(b[N:2 * N]),
            "b_v": view(b[2 * N:]), "b_o": view(mha.out_proj.bias)}


def norm_from_module(norm):
    return {"gamma": norm.weight, "beta": norm.bias}


def ffn_from_module(layer):
    return {"W_1": view(layer.linear1.weight.T), "b_1": layer.linear1.bias, "W_2": view(layer.linear2.weight.T),
            "b_2": layer.linear2.bias}


def encoder_layer_from_module(layer, N):
    return {"attention": attention_from_module(layer.self_attn, N), "norm1": norm_from_module(layer.norm1),
            "ffn": ffn_from_module(layer), "norm2": norm_from_module(layer.norm2)}


def decoder_layer_from_module(layer, N):
    return {"self_attention": attention_from_module(layer.self_attn, N), "norm1": norm_from_module(layer.norm1),
            "cross_attention": attention_from_module(layer.multihead_attn, N), "norm2": norm_from_module(layer.norm2),
            "ffn": ffn_from_module(layer), "norm3": norm_from_module(layer.norm3)}


def leaf(*shape, scale=1.0):
    return (torch.randn(*shape) * scale).requires_grad_()


def attention_leaves(N, H, d, spec):
    Hd = H * d
    p = {"W_q": leaf(N, Hd, scale=1.2 / math.sqrt(N)), "W_k": leaf(N, Hd, scale=1.2 / math.sqrt(N)),
         "W_v": leaf(N, Hd, scale=1.0 / math.sqrt(N))}
    if spec["wo"]:
        p["W_o"] = leaf(Hd, N, scale=1.0 / math.sqrt(Hd))
    for name in spec["biases"]:
        p[name] = leaf(N if name == "b_o" else Hd, scale=0.5)
    return p


# --- the model file and the expected gradients --------------------------------------------------

def attention_json(p, H, d, per_head):
    out = {}
    if per_head:
        out["heads"] = [{k: nested(p[k][:, h * d:(h + 1) * d]) for k in ("W_q", "W_k", "W_v")} for h in range(H)]
    else:
        out.update({k: nested(p[k]) for k in ("W_q", "W_k", "W_v")})
    for k in ("W_o", "b_q", "b_k", "b_v", "b_o"):
        if k in p:
            out[k] = nested(p[k])
    return out


def attention_grads(path, p, H, d, per_head):
    """(name, gradient) of a block's weights in attn's parameter order."""
    out = []
    if per_head:
        for h in range(H):
            out += [(f"{path}.heads.{h}.{k}", p[k].grad[:, h * d:(h + 1) * d]) for k in ("W_q", "W_k", "W_v")]
    else:
        out += [(f"{path}.{k}", p[k].grad) for k in ("W_q", "W_k", "W_v")]
    return out + [(f"{path}.{k}", p[k].grad) for k in ("W_o", "b_q", "b_k", "b_v", "b_o") if k in p]


def block_grads(path, p):
    return [(f"{path}.{k}", p[k].grad) for k in p]


def padding_of(ids):
    padding = ids == PAD
    return padding if bool(padding.any()) else None


class Case:
    def __init__(self, c):
        self.c = c
        self.N, self.H = c["N"], c["H"]
        self.d = c.get("d_head", self.N // self.H)
        self.batched = True
        self.doc = {"comment": "", "model": {"d_model": self.N, "num_heads": self.H}}
        self.embedding = self.positions = None

    def sentences(self, key):
        s = self.c[key]
        self.batched = isinstance(s[0], list)
        return s if self.batched else [s]

    def embed(self, tr, sentences, names):
        """tokens -> ids -> E[ids] (* sqrt N) + PE, as attn records them."""
        ids = T.token_ids(sentences)
        tr.rec(names[0] + ".ids", ids.to(DT), gradient=False)
        padding = padding_of(ids)
        if padding is not None:
            tr.rec(names[0] + ".padding_mask", padding.to(DT), gradient=False)
        x = tr.rec(names[1] + ".lookup", self.embedding[ids])
        if self.c.get("scale"):
            x = tr.rec(names[1] + ".scaled", x * math.sqrt(self.N))
        S = ids.shape[1]
        if self.positions is not None:
            pe = self.positions[:S]
        else:
            pe = T.sinusoidal(S, self.N).requires_grad_()
        tr.rec(names[1] + ".positional", pe, batch_axis=False)
        return x + pe, padding

    def make_vocab(self):
        self.embedding = torch.randn(len(VOCAB), self.N).requires_grad_()
        if self.c.get("positions") == "learned":
            self.positions = (torch.randn(self.c["max_len"], self.N) * 0.5).requires_grad_()
        self.doc["vocab"] = VOCAB
        self.doc["embedding"] = nested(self.embedding)
        m = self.doc["model"]
        m["positional_encoding"] = self.c.get("positions", "sinusoidal")
        m["scale_embeddings"] = bool(self.c.get("scale"))
        if self.positions is not None:
            m["max_len"] = self.c["max_len"]
            self.doc["positions"] = nested(self.positions)

    def source(self, tr):
        """The source: X (a leaf) or tokens; returns x, padding."""
        if "src" in self.c:
            self.make_vocab()
            x, padding = self.embed(tr, self.sentences("src"), ("tokens", "embedding"))
            self.doc["input"] = {"tokens": self.c["src"]}
        else:
            shape = self.c["X"]
            self.batched = len(shape) == 2
            x = torch.randn(*((shape[0], shape[1], self.N) if self.batched else (1, shape[0], self.N)))
            x.requires_grad_()
            self.doc["model"]["positional_encoding"] = "none"
            self.doc["input"] = {"X": nested(x if self.batched else x[0])}
            padding = None
        return tr.rec("input", x), padding


def loss_and_head(case, tr, hidden, head):
    """The output head and the loss; returns (loss, extra gradients to write)."""
    c = case.c
    if not c.get("output"):
        if not hasattr(case, "output_grad"):  # drawn once: the modules' run takes the same
            case.output_grad = torch.randn(hidden.shape)
        g = case.output_grad
        case.doc["input"]["output_grad"] = nested(g if case.batched else g[0])
        return (hidden * g).sum(), []
    E = case.embedding
    logits = tr.rec("output.logits", head(hidden) if head is not None else F.linear(hidden, E))
    probabilities = tr.rec("output.probabilities", torch.softmax(logits, dim=-1))
    labels_text = c["labels"]
    labels = T.token_ids(labels_text if case.batched else [labels_text])
    assert labels.shape == logits.shape[:2], "one label per output position"
    case.doc["input"]["labels"] = labels_text
    V = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=PAD)
    # dL/dp, of the same loss written as -mean log p[label]
    p = probabilities.detach().requires_grad_()
    nll = F.nll_loss(torch.log(p).reshape(-1, V), labels.reshape(-1), ignore_index=PAD)
    assert abs(float(nll) - float(loss)) <= 1e-13 * max(1.0, abs(float(loss)))
    (dp,) = torch.autograd.grad(nll, p)
    return loss, [("grad.output.probabilities", dp)]


def run_attention_case(case, tr):
    c = case.c
    x, padding = case.source(tr)
    S = x.shape[1]
    causal = torch.triu(torch.full((S, S), float("-inf")), diagonal=1) if c.get("causal") else None
    mask = T.combined_mask(S, S, causal, padding)
    if mask is not None:
        tr.rec("encoder.mask", mask, batch_axis=mask.dim() == 3, gradient=False)
    params = [attention_leaves(case.N, case.H, case.d, spec) for spec in c["layers"]]
    for i, p in enumerate(params):
        x = attention(tr, f"encoder.{i}.attention.", x, x, p, case.H, case.d, mask)
    loss, extra = loss_and_head(case, tr, x, None)
    m = case.doc["model"]
    m["d_head"] = case.d
    m["causal"] = bool(c.get("causal"))
    case.doc["encoder"] = [{"attention": attention_json(p, case.H, case.d, spec.get("per_head", False))}
                           for p, spec in zip(params, c["layers"])]

    def weight_grads():
        out = [("grad.embedding", case.embedding.grad)] if case.embedding is not None else []
        for i, (p, spec) in enumerate(zip(params, c["layers"])):
            out += attention_grads(f"grad.encoder.{i}.attention", p, case.H, case.d, spec.get("per_head", False))
        return out
    return loss, extra, weight_grads, None


def build_modules(c):
    """The torch modules of a whole-transformer case, every parameter random (as
    make_torch_transformer_cases.py builds them)."""
    N, H, Fw = c["N"], c["H"], c["F"]
    common = dict(dropout=0.0, activation=ACTIVATIONS[c["act"]], layer_norm_eps=c.get("eps", 1e-5), batch_first=True,
                  norm_first=c["norm_first"], dtype=DT)
    enc, dec, enc_norm, dec_norm = [], [], None, None
    kind = c["kind"]
    if kind == "encoder_layer":
        module = nn.TransformerEncoderLayer(N, H, Fw, **common)
        enc = [module]
    elif kind == "encoder":
        enc_norm = nn.LayerNorm(N, eps=c.get("eps", 1e-5)) if c["final_norm"] else None
        module = nn.TransformerEncoder(nn.TransformerEncoderLayer(N, H, Fw, **common), c["layers"], norm=enc_norm,
                                       enable_nested_tensor=False)
        enc = list(module.layers)
    elif kind == "gpt":
        enc_norm = nn.LayerNorm(N, eps=c.get("eps", 1e-5))
        module = nn.TransformerEncoder(nn.TransformerEncoderLayer(N, H, Fw, **common), c["layers"], norm=enc_norm,
                                       enable_nested_tensor=False)
        enc = list(module.layers)
    elif kind == "encoder_decoder_layer":
        module = nn.ModuleList([nn.TransformerEncoderLayer(N, H, Fw, **common),
                                nn.TransformerDecoderLayer(N, H, Fw, **common)])
        enc, dec = [module[0]], [module[1]]
    else:
        module = nn.Transformer(N, H, c["enc_layers"], c["dec_layers"], Fw, **common)
        enc, dec = list(module.encoder.layers), list(module.decoder.layers)
        enc_norm, dec_norm = module.encoder.norm, module.decoder.norm
    for layer in enc:
        T.randomize_encoder_layer(layer, N)
    for layer in dec:
        T.randomize_decoder_layer(layer, N)
    for norm in (enc_norm, dec_norm):
        if norm is not None:
            T.randomize_norm(norm)
    module.train()  # not the eval() fast path; dropout is 0
    return module, enc, dec, enc_norm, dec_norm


def decoder_only_layer(tr, j, x, p, c, mask, H, d):
    pre = f"decoder.{j}."
    x1 = sublayer(tr, pre, 1, x, p["norm1"], c,
                  lambda h: attention(tr, pre + "self_attention.", h, h, p["attention"], H, d, mask))
    x2 = sublayer(tr, pre, 2, x1, p["norm2"], c, lambda h: feed_forward(tr, pre + "ffn.", h, p["ffn"], c["act"]))
    return tr.rec(pre + "output", x2)


def run_gpt_case(case, tr):
    """A decoder-only model as attn records it: tokens, embedding, input, decoder.self_mask,
    decoder.<j>.*, decoder.norm, output.*."""
    c = case.c
    N, H, d = case.N, case.H, case.d
    eps = c.get("eps", 1e-5)
    module, blocks, _, final_norm, _ = build_modules(c)
    head = None
    if c.get("output") == "linear":
        head = nn.Linear(N, len(VOCAB))
        T.randomize_linear(head)
    params = [encoder_layer_from_module(layer, N) for layer in blocks]
    x, kpm = case.source(tr)
    S = x.shape[1]
    causal = nn.Transformer.generate_square_subsequent_mask(S).to(DT)
    mask = T.combined_mask(S, S, causal, kpm)
    tr.rec("decoder.self_mask", mask, batch_axis=mask.dim() == 3, gradient=False)
    h = x
    for j, p in enumerate(params):
        h = decoder_only_layer(tr, j, h, p, c, mask, H, d)
    h = tr.rec("decoder.norm", layer_norm(h, norm_from_module(final_norm), eps))
    loss, extra = loss_and_head(case, tr, h, head)

    m = case.doc["model"]
    m.update({"architecture": "decoder-only", "d_ff": c["F"], "activation": c["act"], "norm_first": c["norm_first"],
              "layer_norm_eps": eps})
    layers = []
    for layer in blocks:
        j = T.encoder_layer_json(layer, N)
        layers.append({"self_attention": j["attention"], "norm1": j["norm1"], "ffn": j["ffn"], "norm2": j["norm2"]})
    case.doc["decoder"] = layers
    case.doc["decoder_norm"] = T.norm_json(final_norm)
    case.doc["output"] = {"W": nested(head.weight.T), "b": nested(head.bias)} if head is not None else "tied"

    def weight_grads():
        out = [("grad.embedding", case.embedding.grad), ("grad.positions", case.positions.grad)]
        for j, p in enumerate(params):
            out += attention_grads(f"grad.decoder.{j}.self_attention", p["attention"], H, d, False)
            out += block_grads(f"grad.decoder.{j}.norm1", p["norm1"]) + block_grads(f"grad.decoder.{j}.ffn", p["ffn"])
            out += block_grads(f"grad.decoder.{j}.norm2", p["norm2"])
        out += block_grads("grad.decoder_norm", norm_from_module(final_norm))
        if head is not None:
            out += [("grad.output.W", head.weight.grad.T), ("grad.output.b", head.bias.grad)]
        return out

    def module_run():
        """nn.TransformerEncoder's own forward under the causal mask, with the same loss."""
        xm, _ = case.embed(Trace(case.batched), case.sentences("src"), ("t", "e"))
        hm = module(xm, mask=causal, src_key_padding_mask=kpm)
        return loss_and_head(case, Trace(case.batched), hm, head)[0]

    leaves = list(module.parameters()) + ([] if head is None else list(head.parameters()))
    leaves += [case.embedding, case.positions]
    return loss, extra, weight_grads, (module_run, leaves)


def run_module_case(case, tr):
    c = case.c
    N, H, d = case.N, case.H, case.d
    eps = c.get("eps", 1e-5)
    module, enc, dec, enc_norm, dec_norm = build_modules(c)
    head = None
    if c.get("output") == "linear":
        head = nn.Linear(N, len(VOCAB))
        T.randomize_linear(head)
    enc_p = [encoder_layer_from_module(layer, N) for layer in enc]
    dec_p = [decoder_layer_from_module(layer, N) for layer in dec]

    x, src_kpm = case.source(tr)
    S = x.shape[1]
    src_mask = nn.Transformer.generate_square_subsequent_mask(S).to(DT) if c.get("causal") else None
    enc_mask = T.combined_mask(S, S, src_mask, src_kpm)
    if enc_mask is not None:
        tr.rec("encoder.mask", enc_mask, batch_axis=enc_mask.dim() == 3, gradient=False)
    h = x
    for i, p in enumerate(enc_p):
        h = encoder_layer(tr, i, h, p, c, enc_mask, H, d)
    if enc_norm is not None:
        h = tr.rec("encoder.norm", layer_norm(h, norm_from_module(enc_norm), eps))
    memory, y, tgt_kpm, tgt_mask = h, None, None, None
    if dec:
        y, tgt_kpm = case.embed(tr, case.sentences("tgt"), ("target_tokens", "target_embedding"))
        case.doc["input"]["target_tokens"] = c["tgt"]
        h = tr.rec("target_input", y)
        Tt = y.shape[1]
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(Tt).to(DT)
        self_mask = T.combined_mask(Tt, Tt, tgt_mask, tgt_kpm)
        tr.rec("decoder.self_mask", self_mask, batch_axis=self_mask.dim() == 3, gradient=False)
        cross_mask = T.combined_mask(Tt, S, None, src_kpm)
        if cross_mask is not None:
            tr.rec("decoder.cross_mask", cross_mask, batch_axis=cross_mask.dim() == 3, gradient=False)
        for j, p in enumerate(dec_p):
            h = decoder_layer(tr, j, h, memory, p, c, self_mask, cross_mask, H, d)
        if dec_norm is not None:
            h = tr.rec("decoder.norm", layer_norm(h, norm_from_module(dec_norm), eps))
    loss, extra = loss_and_head(case, tr, h, head)

    m = case.doc["model"]
    m.update({"d_ff": c["F"], "activation": c["act"], "norm_first": c["norm_first"], "layer_norm_eps": eps,
              "causal": bool(c.get("causal"))})
    case.doc["encoder"] = [T.encoder_layer_json(layer, N) for layer in enc]
    if enc_norm is not None:
        case.doc["encoder_norm"] = T.norm_json(enc_norm)
    if dec:
        case.doc["decoder"] = [T.decoder_layer_json(layer, N) for layer in dec]
        if dec_norm is not None:
            case.doc["decoder_norm"] = T.norm_json(dec_norm)
    if head is not None:
        case.doc["output"] = {"W": nested(head.weight.T), "b": nested(head.bias)}
    elif c.get("output") == "tied":
        case.doc["output"] = "tied"

    def weight_grads():
        out = [("grad.embedding", case.embedding.grad)] if case.embedding is not None else []
        if case.positions is not None:
            out.append(("grad.positions", case.positions.grad))
        for i, p in enumerate(enc_p):
            out += attention_grads(f"grad.encoder.{i}.attention", p["attention"], H, d, False)
            out += block_grads(f"grad.encoder.{i}.norm1", p["norm1"]) + block_grads(f"grad.encoder.{i}.ffn", p["ffn"])
            out += block_grads(f"grad.encoder.{i}.norm2", p["norm2"])
        if enc_norm is not None:
            out += block_grads("grad.encoder_norm", norm_from_module(enc_norm))
        for j, p in enumerate(dec_p):
            for block in ("self_attention", "norm1", "cross_attention", "norm2", "ffn", "norm3"):
                path = f"grad.decoder.{j}.{block}"
                out += (attention_grads(path, p[block], H, d, False) if "attention" in block else
                        block_grads(path, p[block]))
        if dec_norm is not None:
            out += block_grads("grad.decoder_norm", norm_from_module(dec_norm))
        if head is not None:
            out += [("grad.output.W", head.weight.grad.T), ("grad.output.b", head.bias.grad)]
        return out

    def module_run():
        """The modules' own forward on the same input, with the same loss."""
        xm = x
        if "src" in c:
            xm, _ = case.embed(Trace(case.batched), case.sentences("src"), ("t", "e"))
        kind = c["kind"]
        if kind == "encoder_layer":
            hm = module(xm, src_mask=src_mask, src_key_padding_mask=src_kpm)
        elif kind == "encoder":
            hm = module(xm, mask=src_mask, src_key_padding_mask=src_kpm)
        else:
            ym, _ = case.embed(Trace(case.batched), case.sentences("tgt"), ("t", "e"))
            if kind == "encoder_decoder_layer":
                mm = module[0](xm, src_mask=src_mask, src_key_padding_mask=src_kpm)
                hm = module[1](ym, mm, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=src_kpm)
            else:
                hm = module(xm, ym, src_mask=src_mask, tgt_mask=tgt_mask, src_key_padding_mask=src_kpm,
                            tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=src_kpm)
        return loss_and_head(case, Trace(case.batched), hm, head)[0]

    leaves = list(module.parameters()) + ([] if head is None else list(head.parameters()))
    leaves += [t for t in (case.embedding, case.positions) if t is not None] + ([x] if "X" in c else [])
    return loss, extra, weight_grads, (module_run, leaves)


def check_against_modules(loss, module_check):
    """The modules' own forward and backward give the same loss and the same gradients."""
    module_run, leaves = module_check
    mine = [t.grad.clone() for t in leaves]
    for t in leaves:
        t.grad = None
    module_loss = module_run()
    module_loss.backward()
    assert abs(float(module_loss) - float(loss)) <= MODULE_AGREEMENT * max(1.0, abs(float(loss))), \
        f"module loss {float(module_loss)!r}, functional {float(loss)!r}"
    for i, (t, g) in enumerate(zip(leaves, mine)):
        assert_close(f"module parameter {i} {tuple(t.shape)}", g, t.grad)


def make_case(index, c):
    torch.manual_seed(3000 + index)
    case = Case(c)
    tr = Trace(True)
    run = {"attention": run_attention_case, "gpt": run_gpt_case}.get(c["kind"], run_module_case)
    loss, extra, weight_grads, module_check = run(case, tr)
    tr.batched = case.batched
    loss.backward()
    tensors = [{"name": "loss", "shape": [], "data": [float(loss)]}]

    def add(name, t, batch_axis=True):
        t = tr.shaped(t.detach(), batch_axis)
        tensors.append({"name": name, "shape": list(t.shape), "data": [number(v) for v in t.reshape(-1).tolist()]})

    extra = dict(extra)
    for name, t, batch_axis, has_gradient in reversed(tr.entries):
        if not has_gradient:
            continue
        grad_name = "grad." + name
        add(grad_name, extra.pop(grad_name) if grad_name in extra else t.grad, batch_axis)
    assert not extra, extra
    for name, g in weight_grads():
        add(name, g, batch_axis=False)
    if module_check is not None:
        check_against_modules(loss, module_check)
    description = (f"{c['kind']}, d_model {case.N}, {case.H} heads of {case.d}"
                   f"{', causal' if c.get('causal') else ''}{'' if case.batched else ', unbatched'}"
                   f"{', tokens' if 'src' in c else ', input X'}"
                   f"{', labels, output head ' + c['output'] if c.get('output') else ', output_grad'}; "
                   f"loss and every gradient by PyTorch {torch.__version__} autograd, float64"
                   f"{', checked against the torch.nn modules own backward' if module_check else ''}")
    case.doc["comment"] = "Generated by tests/reference/make_torch_grad_cases.py: " + description
    return case.doc, {"case": c["name"], "description": description, "batched": case.batched, "tensors": tensors}


def main():
    T.write_cases(OUT_DIR, CASES, make_case)


if __name__ == "__main__":
    main()
