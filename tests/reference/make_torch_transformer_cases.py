#!/usr/bin/env python3
"""Writes torch_transformer/<case>.json (an attn model file) and
torch_transformer/<case>.expected.json (every tensor attn records for it, in attn's order, as
PyTorch computes them) for small random float64 transformers.

Run once with Debian's python3-torch (1.13); the C++ test
tests/torch_transformer_reference_test.cpp reads the committed output, so the build never
needs PyTorch:
    /usr/bin/python3 tests/reference/make_torch_transformer_cases.py

The references are torch.nn.TransformerEncoderLayer, nn.TransformerEncoder (with and without
its final norm), nn.TransformerDecoderLayer and nn.Transformer, all float64, batch_first=True,
dropout=0.0, and in train() mode: in eval() mode nn.TransformerEncoder takes the "fast path"
(nested tensors), which returns zeros at padded positions instead of computing them; with
dropout 0 train() mode is the plain computation. attn uses its weights as X @ W, PyTorch as
x @ W.T, so (for every attention block, N = d_model)
    W_q = in_proj_weight[0:N].T, W_k = in_proj_weight[N:2N].T, W_v = in_proj_weight[2N:].T,
    b_q, b_k, b_v = the slices of in_proj_bias, W_o = out_proj.weight.T, b_o = out_proj.bias,
    W_1 = linear1.weight.T, b_1 = linear1.bias, W_2 = linear2.weight.T, b_2 = linear2.bias,
    gamma = norm.weight, beta = norm.bias, embedding = nn.Embedding.weight,
    output.W = nn.Linear(d_model, V).weight.T, output.b = its bias ("tied": logits = x @ E.T).
Every parameter is drawn at random (LayerNorm weights and biases too, so they are not 1 and 0).

Where the values come from:
- Token ids, padding masks and the sinusoidal table are inputs, written here as attn documents
  them (PE[pos, 2i] = sin(pos / 10000**(2i/N)), PE[pos, 2i+1] = cos(...); <PAD> is id 0).
- Every tensor a module returns is captured with forward hooks on the modules themselves while
  the whole nn.Transformer / encoder / layer runs: each LayerNorm's input (the residual sum in
  post-norm) and output, linear1/linear2 (ffn.hidden is linear2's input, after the activation),
  each attention block's output, each layer's output, the final norms.
- Attention weights per head: the attention module is re-run on the input its hook saw, with the
  same masks, need_weights=True and average_attn_weights=False, and its output is asserted equal
  to the hooked one.
- The intermediates no module returns (q, k, v, heads, k_t, scores, scaled and masked scores,
  context, concat, the residual sums of pre-norm layers) are computed with torch ops from the
  module's own parameters, and the script asserts that they reproduce the module's weights and
  outputs to 1e-13, so they are the module's computation, not a second guess.
- PyTorch combines attn_mask and key_padding_mask as attn_mask.masked_fill(key_padding, -inf);
  attn's recorded masks (encoder.mask, decoder.self_mask, decoder.cross_mask) are that combined
  additive mask: (S, S) without padding, (B, S, S) with it.

Expected-file format: {"case", "description", "batched", "tensors": [{"name", "shape",
"data"}]}, data flat in C order, full-precision doubles (Python's repr, shortest round trip);
non-finite values are the strings "-inf", "inf", "nan" because JSON has no literal for them.
Unbatched cases (one sentence, "tokens": [...] or X of shape (S, N)) run in torch as B = 1 and are
written without the B axis, as attn records them.
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
DT = torch.float64
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_transformer")

VOCAB = ["<PAD>", "<UNK>", "<BOS>", "the", "cat", "sat", "on", "mat", "dog", "ran", "far", "big", "red"]
PAD = 0

# kind: "encoder_layer" (one nn.TransformerEncoderLayer), "encoder" (nn.TransformerEncoder of
# `layers`, `final_norm` or not), "encoder_decoder_layer" (one nn.TransformerEncoderLayer feeding
# one nn.TransformerDecoderLayer, no final norms), "transformer" (nn.Transformer: encoder and
# decoder stacks with their final norms).
# src/tgt: lists of token lists (batched), one token list (unbatched), or "X": (B, S) / (S,) for
# numbers given as input.X. output: None, "linear" or "tied".
CASES = [
    dict(name="enc_post_relu_x", kind="encoder_layer", N=8, H=2, F=16, act="relu", norm_first=False,
         X=(2, 4)),
    dict(name="enc_pre_gelu_padded", kind="encoder_layer", N=6, H=3, F=10, act="gelu", norm_first=True,
         src=[["the", "cat", "sat", "on", "mat"], ["big", "dog"], ["ran"]], output="linear"),
    dict(name="enc_post_gelu_causal_padded", kind="encoder_layer", N=12, H=4, F=20, act="gelu", norm_first=False,
         causal=True, src=[["the", "dog", "ran", "far"], ["red", "cat"]], output="linear"),
    dict(name="enc_stack2_relu_learned_scaled_tied", kind="encoder", layers=2, final_norm=False, N=8, H=4, F=12,
         act="relu", norm_first=False, positions="learned", max_len=7, scale=True,
         src=[["cat", "sat"], ["the", "big", "red", "dog", "zebra"], ["on", "mat", "far"]], output="tied"),
    dict(name="enc_stack2_pre_norm_final_norm_x", kind="encoder", layers=2, final_norm=True, N=10, H=2, F=14,
         act="relu", norm_first=True, eps=1e-6, X=(5,), causal=True),
    dict(name="enc_h4_d1_relu", kind="encoder_layer", N=4, H=4, F=6, act="relu", norm_first=False,
         src=[["the", "cat", "sat", "on", "the", "mat"]], output="linear"),
    dict(name="dec_layer_post_relu_padded", kind="encoder_decoder_layer", N=8, H=2, F=12, act="relu",
         norm_first=False, src=[["the", "cat", "sat"], ["dog"]], tgt=[["<BOS>", "big"], ["<BOS>", "red", "cat", "ran"]],
         output="linear"),
    dict(name="dec_layer_pre_gelu_unbatched", kind="encoder_decoder_layer", N=6, H=2, F=8, act="gelu",
         norm_first=True, src=["dog", "ran", "far", "on", "mat"], tgt=["<BOS>", "the", "dog"], output="tied"),
    dict(name="transformer_post_relu_padded", kind="transformer", enc_layers=2, dec_layers=2, N=8, H=2, F=12,
         act="relu", norm_first=False, src=[["the", "big", "cat"], ["dog", "sat", "on", "the", "mat", "far"], ["red"]],
         tgt=[["<BOS>", "cat"], ["<BOS>"], ["<BOS>", "the", "red", "dog", "ran"]], output="linear"),
    dict(name="transformer_pre_gelu_causal_scaled", kind="transformer", enc_layers=1, dec_layers=1, N=12, H=3, F=18,
         act="gelu", norm_first=True, causal=True, scale=True, eps=1e-4,
         src=[["on", "the", "mat"], ["cat", "ran"]], tgt=[["<BOS>", "the"], ["<BOS>", "big", "dog"]], output="tied"),
    dict(name="transformer_h1_s1_unbatched", kind="transformer", enc_layers=1, dec_layers=1, N=4, H=1, F=6,
         act="relu", norm_first=False, src=["cat"], tgt=["<BOS>"], output="linear"),
]

# Hand-made intermediates must reproduce the modules' own values to this (relative) bound.
AGREEMENT = 1e-13


def number(x):
    if math.isfinite(x):
        return x
    return "-inf" if x < 0 else ("inf" if x > 0 else "nan")


def nested(t):
    return t.tolist()


def assert_agree(name, mine, module):
    assert mine.shape == module.shape, f"{name}: shapes {tuple(mine.shape)} and {tuple(module.shape)}"
    both_inf = torch.isinf(mine) & torch.isinf(module) & (torch.sign(mine) == torch.sign(module))
    diff = torch.where(both_inf, torch.zeros_like(mine), (mine - module).abs())
    bound = AGREEMENT * torch.clamp(module.abs(), min=1.0)
    assert bool((diff <= bound).all()), f"{name}: hand-made and module values differ by {diff.max().item()}"


def sinusoidal(S, N):
    # attn's documented table, element by element: PE[pos, i] = sin(pos / 10000**(i/N)) for even
    # i (i = 2k), PE[pos, i+1] = cos of the same angle.
    pe = torch.zeros(S, N)
    for pos in range(S):
        for i in range(0, N, 2):
            angle = pos / 10000 ** (i / N)
            pe[pos, i] = math.sin(angle)
            if i + 1 < N:
                pe[pos, i + 1] = math.cos(angle)
    return pe


def randomize_attention(mha, N):
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.randn(3 * N, N) * (1.5 / math.sqrt(N)))
        mha.in_proj_bias.copy_(torch.randn(3 * N) * 0.5)
        mha.out_proj.weight.copy_(torch.randn(N, N) * (1.0 / math.sqrt(N)))
        mha.out_proj.bias.copy_(torch.randn(N) * 0.5)


def randomize_norm(norm):
    with torch.no_grad():
        norm.weight.copy_(1.0 + 0.3 * torch.randn(norm.weight.shape))
        norm.bias.copy_(0.2 * torch.randn(norm.bias.shape))


def randomize_linear(linear):
    with torch.no_grad():
        fan_in = linear.weight.shape[1]
        linear.weight.copy_(torch.randn(linear.weight.shape) * (1.2 / math.sqrt(fan_in)))
        linear.bias.copy_(torch.randn(linear.bias.shape) * 0.5)


def randomize_encoder_layer(layer, N):
    randomize_attention(layer.self_attn, N)
    randomize_linear(layer.linear1)
    randomize_linear(layer.linear2)
    randomize_norm(layer.norm1)
    randomize_norm(layer.norm2)


def randomize_decoder_layer(layer, N):
    randomize_attention(layer.self_attn, N)
    randomize_attention(layer.multihead_attn, N)
    randomize_linear(layer.linear1)
    randomize_linear(layer.linear2)
    for norm in (layer.norm1, layer.norm2, layer.norm3):
        randomize_norm(norm)


def attention_json(mha, N):
    W, b = mha.in_proj_weight, mha.in_proj_bias
    return {"W_q": nested(W[:N].T), "W_k": nested(W[N:2 * N].T), "W_v": nested(W[2 * N:].T),
            "W_o": nested(mha.out_proj.weight.T),
            "b_q": nested(b[:N]), "b_k": nested(b[N:2 * N]), "b_v": nested(b[2 * N:]),
            "b_o": nested(mha.out_proj.bias)}


def norm_json(norm):
    return {"gamma": nested(norm.weight), "beta": nested(norm.bias)}


def ffn_json(layer):
    return {"W_1": nested(layer.linear1.weight.T), "b_1": nested(layer.linear1.bias),
            "W_2": nested(layer.linear2.weight.T), "b_2": nested(layer.linear2.bias)}


def encoder_layer_json(layer, N):
    return {"attention": attention_json(layer.self_attn, N), "norm1": norm_json(layer.norm1),
            "ffn": ffn_json(layer), "norm2": norm_json(layer.norm2)}


def decoder_layer_json(layer, N):
    return {"self_attention": attention_json(layer.self_attn, N), "norm1": norm_json(layer.norm1),
            "cross_attention": attention_json(layer.multihead_attn, N), "norm2": norm_json(layer.norm2),
            "ffn": ffn_json(layer), "norm3": norm_json(layer.norm3)}


class Recorder:
    """Forward hooks that keep what each module saw and returned during one forward pass."""

    def __init__(self):
        self.calls = {}    # module -> (inputs, output)
        self.active = True
        self.handles = []

    def watch(self, module):
        def hook(mod, inputs, output):
            if self.active:
                assert mod not in self.calls, "each module runs once per forward pass"
                self.calls[mod] = (inputs, output)
        self.handles.append(module.register_forward_hook(hook))

    def input(self, module, i=0):
        return self.calls[module][0][i]

    def output(self, module):
        out = self.calls[module][1]
        return out[0] if isinstance(out, tuple) else out


def combined_mask(L, S, causal_mask, key_padding):
    """The additive mask PyTorch applies: attn_mask (L, S) with key_padding (B, S) filled in as
    -inf; returns (L, S) without padding, (B, L, S) with it, or None."""
    if key_padding is None:
        return causal_mask
    base = causal_mask if causal_mask is not None else torch.zeros(L, S)
    return base.unsqueeze(0).expand(key_padding.shape[0], L, S).masked_fill(key_padding[:, None, :], float("-inf"))


class Case:
    def __init__(self, c):
        self.c = c
        self.tensors = []
        self.batched = True

    def rec(self, name, t, batch_axis=True):
        # As attn records it: unbatched input runs as B = 1 and is recorded without the B axis.
        # batch_axis=False for tensors that have none (positions (S,N), masks (S,S)).
        if not self.batched and batch_axis:
            assert t.shape[0] == 1, name
            t = t.squeeze(0)
        self.tensors.append({"name": name, "shape": list(t.shape), "data": [number(x) for x in t.reshape(-1).tolist()]})

    def attention(self, prefix, mha, recorder, attn_mask, key_padding, mask, H):
        """Records the attention block's tensors; mask is the combined additive mask (or None)."""
        x_q, x_kv = recorder.input(mha, 0), recorder.input(mha, 1)
        hooked = recorder.output(mha)
        recorder.active = False
        with torch.no_grad():
            module_out, module_weights = mha(x_q, x_kv, x_kv, attn_mask=attn_mask, key_padding_mask=key_padding,
                                             need_weights=True, average_attn_weights=False)
        recorder.active = True
        assert_agree(prefix + "output (re-run)", module_out, hooked)
        B, L, N = x_q.shape
        S = x_kv.shape[1]
        d = N // H
        W, b = mha.in_proj_weight, mha.in_proj_bias
        q = F.linear(x_q, W[:N], b[:N])                        # (B,L,N) @ (N,H*d) -> (B,L,H*d)
        k = F.linear(x_kv, W[N:2 * N], b[N:2 * N])             # (B,S,N) @ (N,H*d) -> (B,S,H*d)
        v = F.linear(x_kv, W[2 * N:], b[2 * N:])
        q_heads = q.view(B, L, H, d).transpose(1, 2)          # (B,L,H*d) -> (B,L,H,d) -> (B,H,L,d)
        k_heads = k.view(B, S, H, d).transpose(1, 2)
        v_heads = v.view(B, S, H, d).transpose(1, 2)
        k_t = k_heads.transpose(-2, -1)                        # (B,H,S,d) -> (B,H,d,S)
        scores = q_heads @ k_t                                 # (B,H,L,d) @ (B,H,d,S) -> (B,H,L,S)
        scaled = scores / math.sqrt(d)
        masked = None
        if mask is not None:
            masked = scaled + (mask if mask.dim() == 2 else mask[:, None, :, :])
        assert_agree(prefix + "weights", torch.softmax(masked if masked is not None else scaled, dim=-1),
                     module_weights)
        context = module_weights @ v_heads                     # (B,H,L,S) @ (B,H,S,d) -> (B,H,L,d)
        concat = context.transpose(1, 2).reshape(B, L, N)      # (B,H,L,d) -> (B,L,H,d) -> (B,L,H*d)
        output = F.linear(concat, mha.out_proj.weight, mha.out_proj.bias)  # (B,L,H*d) @ (H*d,N) -> (B,L,N)
        assert_agree(prefix + "output", output, hooked)
        # attn records each projection's product, then its bias as a step of its own
        for name, t in (("q", F.linear(x_q, W[:N])), ("q_biased", q), ("k", F.linear(x_kv, W[N:2 * N])),
                        ("k_biased", k), ("v", F.linear(x_kv, W[2 * N:])), ("v_biased", v), ("q_heads", q_heads),
                        ("k_heads", k_heads), ("v_heads", v_heads), ("k_t", k_t), ("scores", scores),
                        ("scaled_scores", scaled)):
            self.rec(prefix + name, t)
        if masked is not None:
            self.rec(prefix + "masked_scores", masked)
        self.rec(prefix + "weights", module_weights)
        self.rec(prefix + "context", context)
        self.rec(prefix + "concat", concat)
        self.rec(prefix + "output", hooked)
        return hooked

    def ffn(self, prefix, layer, recorder):
        pre_activation = recorder.output(layer.linear1)
        hidden = recorder.input(layer.linear2)                 # act(x @ W_1 + b_1), dropout 0
        assert_agree(prefix + "hidden", F.relu(pre_activation) if self.c["act"] == "relu" else F.gelu(pre_activation),
                     hidden)
        self.rec(prefix + "hidden", hidden)
        self.rec(prefix + "output", recorder.output(layer.linear2))
        return recorder.output(layer.linear2)

    def encoder_layer(self, i, layer, recorder, src_mask, src_kpm, mask, H):
        p = f"encoder.{i}."
        x = recorder.input(layer)
        if not self.c["norm_first"]:
            a = self.attention(p + "attention.", layer.self_attn, recorder, src_mask, src_kpm, mask, H)
            assert_agree(p + "residual1", x + a, recorder.input(layer.norm1))
            self.rec(p + "residual1", recorder.input(layer.norm1))
            self.rec(p + "add_norm1", recorder.output(layer.norm1))
            f = self.ffn(p + "ffn.", layer, recorder)
            assert_agree(p + "residual2", recorder.output(layer.norm1) + f, recorder.input(layer.norm2))
            self.rec(p + "residual2", recorder.input(layer.norm2))
            self.rec(p + "add_norm2", recorder.output(layer.norm2))
        else:
            self.rec(p + "norm1", recorder.output(layer.norm1))
            a = self.attention(p + "attention.", layer.self_attn, recorder, src_mask, src_kpm, mask, H)
            assert_agree(p + "residual1", x + a, recorder.input(layer.norm2))
            self.rec(p + "residual1", recorder.input(layer.norm2))
            self.rec(p + "norm2", recorder.output(layer.norm2))
            f = self.ffn(p + "ffn.", layer, recorder)
            residual2 = recorder.input(layer.norm2) + f       # the layer's own last operation
            assert_agree(p + "residual2", residual2, recorder.output(layer))
            self.rec(p + "residual2", recorder.output(layer))
        self.rec(p + "output", recorder.output(layer))

    def decoder_layer(self, j, layer, recorder, tgt_mask, tgt_kpm, self_mask, mem_kpm, cross_mask, H):
        p = f"decoder.{j}."
        y = recorder.input(layer)
        if not self.c["norm_first"]:
            sa = self.attention(p + "self_attention.", layer.self_attn, recorder, tgt_mask, tgt_kpm, self_mask, H)
            assert_agree(p + "residual1", y + sa, recorder.input(layer.norm1))
            self.rec(p + "residual1", recorder.input(layer.norm1))
            self.rec(p + "add_norm1", recorder.output(layer.norm1))
            ca = self.attention(p + "cross_attention.", layer.multihead_attn, recorder, None, mem_kpm, cross_mask, H)
            assert_agree(p + "residual2", recorder.output(layer.norm1) + ca, recorder.input(layer.norm2))
            self.rec(p + "residual2", recorder.input(layer.norm2))
            self.rec(p + "add_norm2", recorder.output(layer.norm2))
            f = self.ffn(p + "ffn.", layer, recorder)
            assert_agree(p + "residual3", recorder.output(layer.norm2) + f, recorder.input(layer.norm3))
            self.rec(p + "residual3", recorder.input(layer.norm3))
            self.rec(p + "add_norm3", recorder.output(layer.norm3))
        else:
            self.rec(p + "norm1", recorder.output(layer.norm1))
            sa = self.attention(p + "self_attention.", layer.self_attn, recorder, tgt_mask, tgt_kpm, self_mask, H)
            assert_agree(p + "residual1", y + sa, recorder.input(layer.norm2))
            self.rec(p + "residual1", recorder.input(layer.norm2))
            self.rec(p + "norm2", recorder.output(layer.norm2))
            ca = self.attention(p + "cross_attention.", layer.multihead_attn, recorder, None, mem_kpm, cross_mask, H)
            assert_agree(p + "residual2", recorder.input(layer.norm2) + ca, recorder.input(layer.norm3))
            self.rec(p + "residual2", recorder.input(layer.norm3))
            self.rec(p + "norm3", recorder.output(layer.norm3))
            f = self.ffn(p + "ffn.", layer, recorder)
            assert_agree(p + "residual3", recorder.input(layer.norm3) + f, recorder.output(layer))
            self.rec(p + "residual3", recorder.output(layer))
        self.rec(p + "output", recorder.output(layer))


def token_ids(sentences):
    """(B, S) ids padded with <PAD>, as attn's lookup does; unknown words are <UNK>."""
    S = max(len(s) for s in sentences)
    ids = [[VOCAB.index(w) if w in VOCAB else VOCAB.index("<UNK>") for w in s] + [PAD] * (S - len(s))
           for s in sentences]
    return torch.tensor(ids, dtype=torch.long)


def make_case(index, c):
    torch.manual_seed(2000 + index)
    N, H, Fw = c["N"], c["H"], c["F"]
    eps = c.get("eps", 1e-5)
    causal = c.get("causal", False)
    kind = c["kind"]
    case = Case(c)
    common = dict(dropout=0.0, activation=c["act"], layer_norm_eps=eps, batch_first=True,
                  norm_first=c["norm_first"], dtype=DT)

    # The modules, every parameter random. nn.TransformerEncoder/Decoder deep-copy their layer,
    # so each layer is randomized after the stack is built.
    encoder_layers, decoder_layers, encoder_norm, decoder_norm = [], [], None, None
    if kind == "encoder_layer":
        module = nn.TransformerEncoderLayer(N, H, Fw, **common)
        encoder_layers = [module]
    elif kind == "encoder":
        layer = nn.TransformerEncoderLayer(N, H, Fw, **common)
        encoder_norm = nn.LayerNorm(N, eps=eps) if c["final_norm"] else None
        module = nn.TransformerEncoder(layer, c["layers"], norm=encoder_norm, enable_nested_tensor=False)
        encoder_layers = list(module.layers)
    elif kind == "encoder_decoder_layer":
        enc = nn.TransformerEncoderLayer(N, H, Fw, **common)
        dec = nn.TransformerDecoderLayer(N, H, Fw, **common)
        module = nn.ModuleList([enc, dec])
        encoder_layers, decoder_layers = [enc], [dec]
    else:
        module = nn.Transformer(N, H, c["enc_layers"], c["dec_layers"], Fw, **common)
        encoder_layers, decoder_layers = list(module.encoder.layers), list(module.decoder.layers)
        encoder_norm, decoder_norm = module.encoder.norm, module.decoder.norm
    for layer in encoder_layers:
        randomize_encoder_layer(layer, N)
    for layer in decoder_layers:
        randomize_decoder_layer(layer, N)
    for norm in (encoder_norm, decoder_norm):
        if norm is not None:
            randomize_norm(norm)
    module.train()  # not the eval() fast path; dropout is 0

    uses_tokens = "src" in c
    embedding = nn.Embedding(len(VOCAB), N) if uses_tokens else None
    positions = None
    if uses_tokens and c.get("positions") == "learned":
        positions = torch.randn(c["max_len"], N) * 0.5
    head = None
    if c.get("output") == "linear":
        head = nn.Linear(N, len(VOCAB))
        randomize_linear(head)

    def embed(sentences, names):
        # tokens -> ids (B,S) -> E[ids] (B,S,N) (* sqrt(N)) + positions (S,N)
        ids = token_ids(sentences)
        padding = ids == PAD
        case.rec(names[0] + ".ids", ids.to(DT))
        if bool(padding.any()):
            case.rec(names[0] + ".padding_mask", padding.to(DT))
        with torch.no_grad():
            x = embedding(ids)
        case.rec(names[1] + ".lookup", x)
        if c.get("scale"):
            x = x * math.sqrt(N)
            case.rec(names[1] + ".scaled", x)
        S = ids.shape[1]
        pe = positions[:S] if positions is not None else sinusoidal(S, N)
        case.rec(names[1] + ".positional", pe, batch_axis=False)
        x = x + pe
        return x, (padding if bool(padding.any()) else None)

    # Source: tokens or X.
    if uses_tokens:
        src = c["src"]
        case.batched = isinstance(src[0], list)
        sentences = src if case.batched else [src]
        x, src_kpm = embed(sentences, ("tokens", "embedding"))
    else:
        shape = c["X"]
        case.batched = len(shape) == 2
        x = torch.randn(*((shape[0], shape[1], N) if case.batched else (1, shape[0], N)))
        src_kpm = None
    case.rec("input", x)
    B, S = x.shape[0], x.shape[1]
    src_mask = nn.Transformer.generate_square_subsequent_mask(S).to(DT) if causal else None
    enc_mask = combined_mask(S, S, src_mask, src_kpm)
    if enc_mask is not None:
        case.rec("encoder.mask", enc_mask, batch_axis=enc_mask.dim() == 3)

    # Target (decoder cases): always tokens, always causal.
    y = tgt_kpm = tgt_mask = None
    if decoder_layers:
        tgt = c["tgt"]
        assert isinstance(tgt[0], list) == case.batched
        pending = case.tensors
        case.tensors = []
        y, tgt_kpm = embed(tgt if case.batched else [tgt], ("target_tokens", "target_embedding"))
        target_records, case.tensors = case.tensors, pending
        T = y.shape[1]
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(T).to(DT)

    # Run the torch modules once, with hooks on everything.
    recorder = Recorder()
    watched = [*encoder_layers, *decoder_layers]
    for layer in encoder_layers:
        watched += [layer.self_attn, layer.norm1, layer.norm2, layer.linear1, layer.linear2]
    for layer in decoder_layers:
        watched += [layer.self_attn, layer.multihead_attn, layer.norm1, layer.norm2, layer.norm3, layer.linear1,
                    layer.linear2]
    watched += [n for n in (encoder_norm, decoder_norm) if n is not None]
    for m in watched:
        recorder.watch(m)
    with torch.no_grad():
        if kind == "encoder_layer":
            hidden = module(x, src_mask=src_mask, src_key_padding_mask=src_kpm)
            memory = hidden
        elif kind == "encoder":
            hidden = module(x, mask=src_mask, src_key_padding_mask=src_kpm)
            memory = hidden
        elif kind == "encoder_decoder_layer":
            memory = module[0](x, src_mask=src_mask, src_key_padding_mask=src_kpm)
            hidden = module[1](y, memory, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_kpm,
                               memory_key_padding_mask=src_kpm)
        else:
            hidden = module(x, y, src_mask=src_mask, tgt_mask=tgt_mask, src_key_padding_mask=src_kpm,
                            tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=src_kpm)
            memory = recorder.output(encoder_norm)

    # attn's order: the encoder stack, its norm, then the target, the decoder stack, its norm.
    for i, layer in enumerate(encoder_layers):
        case.encoder_layer(i, layer, recorder, src_mask, src_kpm, enc_mask, H)
    if encoder_norm is not None:
        case.rec("encoder.norm", recorder.output(encoder_norm))
    if decoder_layers:
        case.tensors += target_records
        case.rec("target_input", y)
        T = y.shape[1]
        self_mask = combined_mask(T, T, tgt_mask, tgt_kpm)
        case.rec("decoder.self_mask", self_mask, batch_axis=self_mask.dim() == 3)
        cross_mask = combined_mask(T, S, None, src_kpm)
        if cross_mask is not None:
            case.rec("decoder.cross_mask", cross_mask, batch_axis=cross_mask.dim() == 3)
        for j, layer in enumerate(decoder_layers):
            assert_agree(f"decoder.{j} memory", recorder.input(layer, 1), memory)
            case.decoder_layer(j, layer, recorder, tgt_mask, tgt_kpm, self_mask, src_kpm, cross_mask, H)
        if decoder_norm is not None:
            case.rec("decoder.norm", recorder.output(decoder_norm))
    last = decoder_layers[-1] if decoder_layers else encoder_layers[-1]
    final_norm = decoder_norm if decoder_layers else encoder_norm
    assert_agree("hidden", recorder.output(final_norm) if final_norm is not None else recorder.output(last), hidden)

    if c.get("output"):
        with torch.no_grad():
            # (B,T,N) @ (N,V) -> (B,T,V); tied: (B,T,N) @ (N,V) with E^T
            logits = head(hidden) if head is not None else F.linear(hidden, embedding.weight)
        case.rec("output.logits", logits)
        case.rec("output.probabilities", torch.softmax(logits, dim=-1))

    # The attn model file.
    model_cfg = {"d_model": N, "num_heads": H, "d_ff": Fw, "activation": c["act"], "norm_first": c["norm_first"],
                 "layer_norm_eps": eps, "causal": causal}
    doc = {"comment": "", "model": model_cfg}
    if uses_tokens:
        model_cfg["positional_encoding"] = c.get("positions", "sinusoidal")
        model_cfg["scale_embeddings"] = bool(c.get("scale"))
        if positions is not None:
            model_cfg["max_len"] = c["max_len"]
        doc["vocab"] = VOCAB
        doc["embedding"] = nested(embedding.weight)
        if positions is not None:
            doc["positions"] = nested(positions)
        doc["input"] = {"tokens": c["src"]}
        if decoder_layers:
            doc["input"]["target_tokens"] = c["tgt"]
    else:
        model_cfg["positional_encoding"] = "none"
        doc["input"] = {"X": nested(x if case.batched else x[0])}
    doc["encoder"] = [encoder_layer_json(layer, N) for layer in encoder_layers]
    if encoder_norm is not None:
        doc["encoder_norm"] = norm_json(encoder_norm)
    if decoder_layers:
        doc["decoder"] = [decoder_layer_json(layer, N) for layer in decoder_layers]
        if decoder_norm is not None:
            doc["decoder_norm"] = norm_json(decoder_norm)
    if head is not None:
        doc["output"] = {"W": nested(head.weight.T), "b": nested(head.bias)}
    elif c.get("output") == "tied":
        doc["output"] = "tied"

    torch_name = {"encoder_layer": "nn.TransformerEncoderLayer",
                  "encoder": f"nn.TransformerEncoder({c.get('layers')} layers, "
                             f"{'with' if c.get('final_norm') else 'without'} final norm)",
                  "encoder_decoder_layer": "nn.TransformerEncoderLayer -> nn.TransformerDecoderLayer",
                  "transformer": f"nn.Transformer({c.get('enc_layers')} encoder, {c.get('dec_layers')} decoder layers,"
                                 " final norms)"}[kind]
    description = (f"{torch_name}, d_model {N}, {H} heads, d_ff {Fw}, {c['act']}, "
                   f"{'pre-norm' if c['norm_first'] else 'post-norm'}, eps {eps}"
                   f"{', causal encoder' if causal else ''}"
                   f"{', padded source' if src_kpm is not None else ''}"
                   f"{', padded target' if tgt_kpm is not None else ''}"
                   f"{'' if case.batched else ', unbatched'}"
                   f"{', input X' if not uses_tokens else ', ' + model_cfg['positional_encoding'] + ' positions'}"
                   f"{', scaled embeddings' if c.get('scale') else ''}"
                   f"{', output head ' + c['output'] if c.get('output') else ''}; float64, batch_first, dropout 0, "
                   f"train() mode")
    doc["comment"] = "Generated by tests/reference/make_torch_transformer_cases.py: " + description
    expected = {"case": c["name"], "description": description, "batched": case.batched, "tensors": case.tensors}
    return doc, expected


def write_cases(out_dir, cases, make):
    """<case>.json and <case>.expected.json for every case, from make(index, case), and
    cases.txt listing them (make_torch_grad_cases.py writes its cases the same way)."""
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for i, c in enumerate(cases):
        doc, expected = make(i, c)
        with open(os.path.join(out_dir, c["name"] + ".json"), "w") as f:
            json.dump(doc, f, indent=None)
            f.write("\n")
        with open(os.path.join(out_dir, c["name"] + ".expected.json"), "w") as f:
            json.dump(expected, f, indent=None)
            f.write("\n")
        names.append(c["name"])
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"wrote {len(names)} cases to {out_dir} (torch {torch.__version__})")


def main():
    write_cases(OUT_DIR, CASES, make_case)


if __name__ == "__main__":
    main()
