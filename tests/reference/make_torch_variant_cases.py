#!/usr/bin/env python3
"""Writes torch_variants/<case>.json (an attn model file using the modern variants: RMSNorm,
gelu_tanh, SwiGLU, RoPE, grouped-query attention, a sliding window) and
torch_variants/<case>.expected.json: every forward trace entry attn records for it and, with
input.labels or input.output_grad, the loss and every gradient (of the entries and of the
weights), under attn's trace names (docs/trace-names.md), as PyTorch float64 computes them.

Run once with Debian's python3-torch (1.13); the C++ test
tests/backward/torch_variant_reference_test.cpp reads the committed output:
    /usr/bin/python3 tests/reference/make_torch_variant_cases.py

PyTorch 1.13 has modules for none of these variants except the tanh GELU
(F.gelu(approximate="tanh")), so each is written here in torch ops, as the papers and the
reference code define them:
- RMSNorm (Zhang & Sennrich 2019; Llama's LlamaRMSNorm): x * rsqrt(mean(x^2) + eps) * gamma.
- SwiGLU (Shazeer 2020; Llama's MLP): (silu(x W_1) * (x W_3)) W_2, with F.silu.
- RoPE (Su et al. 2021) in Llama's rotate-half form (Hugging Face's apply_rotary_pos_emb):
  inv_freq = 1 / theta^(arange(0, d, 2) / d), angle[pos][i] = pos * inv_freq[i],
  rotate_half(x) = cat(-x[d/2:], x[:d/2]), x * cos + rotate_half(x) * sin with the cos and
  sin of the angles repeated for both halves; applied to q_heads and k_heads of
  self-attention (positions 0 .. S-1), never to cross-attention.
- Grouped-query attention (Ainslie et al. 2023; Hugging Face's repeat_kv): W_k, W_v are
  (N, G*d); k_heads, v_heads (B, G, T, d) repeated to H heads with repeat_interleave(H // G),
  so query head h reads key/value head h // (H / G); G = 1 is multi-query attention.
- Sliding window (Mistral): query i sees keys i-W+1 .. i (with the causal mask).
autograd then gives every gradient. The rest (attention, residuals, LayerNorm, the output
head and its cross-entropy) is the same as make_torch_grad_cases.py's.

Expected-file format: {"case", "description", "batched", "tensors": [{"name", "shape",
"data"}]}: the forward entries in attn's order, then "loss" and grad.<name> (any order: the
test finds them by name); data flat in C order; unbatched cases without the B axis.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

import make_torch_transformer_cases as T

torch.set_default_dtype(torch.float64)
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_variants")
VOCAB, PAD = T.VOCAB, T.PAD

# Every case is an encoder stack (causal = a decoder-only model's stack) over X or tokens,
# or an encoder-decoder (tgt, dec_layers, dec_final_norm). Keys: N, H, G (num_kv_heads), F,
# layers, norm, act, rope (theta), window, causal, norm_first, eps, final_norm, X (shape) or
# src (tokens), tgt, labels (with an output head: output "linear" or "tied"), biases, qk_norm
# (Qwen3's q_norm and k_norm), rope_scaling (Llama 3.1's "llama3" frequency adjustment).
CASES = [
    dict(name="rmsnorm_post_relu_x", N=6, H=2, F=8, layers=2, norm="rmsnorm", act="relu", norm_first=False,
         eps=1e-6, X=(2, 4)),
    dict(name="rmsnorm_pre_final_gamma_unbatched", N=5, H=1, F=7, layers=1, norm="rmsnorm", act="gelu",
         norm_first=True, final_norm=True, X=(3,)),
    dict(name="gelu_tanh_post_tokens_linear", N=6, H=3, F=10, layers=1, act="gelu_tanh", norm_first=False,
         causal=True, src=[["the", "cat", "sat"], ["big", "dog", "ran"]], output="linear",
         labels=[["cat", "sat", "on"], ["dog", "ran", "far"]]),
    dict(name="swiglu_pre_rmsnorm_x", N=6, H=2, F=9, layers=2, act="swiglu", norm="rmsnorm", norm_first=True,
         final_norm=True, X=(2, 3)),
    dict(name="rope_post_causal_x", N=8, H=2, F=6, layers=2, rope=10000.0, causal=True, norm_first=False, X=(2, 5)),
    dict(name="rope_theta_tokens_padded_tied", N=8, H=4, F=10, layers=1, rope=500.0, causal=True, norm_first=True,
         biases=("b_q", "b_k"), final_norm=True, src=[["the", "cat", "sat", "on", "mat"], ["big", "dog"]],
         output="tied", labels=[["cat", "sat", "on", "the", "mat"], ["dog", "ran"]]),
    dict(name="rope_d_head_6_unbatched", N=4, H=2, d_head=6, F=5, layers=1, rope=10000.0, norm_first=True, X=(4,)),
    dict(name="gqa_h4_g2_post_x", N=8, H=4, G=2, F=6, layers=2, norm_first=False, biases=("b_k", "b_v", "b_o"),
         X=(2, 4)),
    dict(name="mqa_h3_g1_causal_tokens", N=6, H=3, G=1, F=8, layers=1, norm_first=True, causal=True,
         src=[["the", "big", "dog", "ran"], ["red", "cat"]], output="linear",
         labels=[["big", "dog", "ran", "far"], ["cat", "sat"]]),
    dict(name="window_2_causal_x", N=4, H=2, F=6, layers=2, causal=True, window=2, norm_first=True, X=(2, 5)),
    dict(name="window_1_padded_tokens", N=4, H=2, F=5, layers=1, causal=True, window=1, norm_first=False,
         src=[["<PAD>", "cat", "sat"], ["dog"]], output="tied", labels=[["cat", "sat", "on"], ["ran"]]),
    # The Llama-style block: RMSNorm (pre-norm, final norm), RoPE, grouped-query attention,
    # SwiGLU, a sliding window, a tied head; two layers.
    dict(name="llama_block", N=8, H=4, G=2, F=12, layers=2, norm="rmsnorm", eps=1e-6, act="swiglu",
         rope=10000.0, window=3, causal=True, norm_first=True, final_norm=True,
         src=[["<BOS>", "the", "cat", "sat", "on", "the", "mat"], ["<BOS>", "the", "big", "dog", "ran"]],
         output="tied", labels=[["the", "cat", "sat", "on", "the", "mat", "<PAD>"], ["the", "big", "dog", "ran", "far"]]),
    dict(name="llama_block_mqa_unbatched_linear", N=8, H=2, G=1, F=10, layers=1, norm="rmsnorm", act="swiglu",
         rope=500.0, window=2, causal=True, norm_first=True, final_norm=True,
         src=["<BOS>", "the", "red", "cat", "ran"], output="linear", labels=["the", "red", "cat", "ran", "far"]),
    # An encoder-decoder with every variant: RoPE in both self-attentions (not in
    # cross-attention), grouped keys and values in all three blocks, the window in the
    # decoder's masked self-attention only, padding on both sides.
    dict(name="encdec_llama_variants_padded", N=8, H=4, G=2, F=10, layers=1, dec_layers=2, norm="rmsnorm",
         act="swiglu", rope=10000.0, window=2, norm_first=True, final_norm=True, dec_final_norm=True,
         src=[["the", "cat", "sat", "on", "the", "mat"], ["big", "dog", "ran"]],
         tgt=[["<BOS>", "the", "cat", "sat"], ["<BOS>", "dog"]], output="linear",
         labels=[["the", "cat", "sat", "on"], ["dog", "ran"]]),
    dict(name="encdec_gelu_tanh_post_unbatched", N=6, H=2, F=8, layers=1, dec_layers=1, act="gelu_tanh",
         norm_first=False, src=["the", "red", "cat"], tgt=["<BOS>", "the", "red", "cat"], output="tied",
         labels=["the", "red", "cat", "ran"]),
    # Qwen3's attention: biases on q, k and v (Qwen2's), an RMSNorm over each query and key
    # head before RoPE (q_norm, k_norm), grouped-query attention, a head size of its own.
    dict(name="qwen3_qk_norm_gqa_tokens", N=8, H=4, G=2, d_head=6, F=10, layers=2, norm="rmsnorm", eps=1e-6,
         act="swiglu", rope=1000.0, causal=True, norm_first=True, final_norm=True, biases=("b_q", "b_k", "b_v"),
         qk_norm=True, src=[["<BOS>", "the", "cat", "sat", "on"], ["<BOS>", "big", "dog"]], output="linear",
         labels=[["the", "cat", "sat", "on", "the"], ["big", "dog", "ran"]]),
    # Llama 3.1's RoPE: the inverse frequencies adjusted by rope_scaling "llama3", with an
    # original context so short that d = 16's eight pairs fall in all three bands.
    dict(name="llama3_rope_scaling_x", N=16, H=1, F=8, layers=1, norm="rmsnorm", act="swiglu", rope=10000.0,
         rope_scaling=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                           original_max_position_embeddings=64),
         causal=True, norm_first=True, X=(1, 4)),
]


def nested(t):
    return t.detach().tolist()


def number(x):
    if math.isfinite(x):
        return x
    return "-inf" if x < 0 else ("inf" if x > 0 else "nan")


def flat(t):
    return [number(float(v)) for v in t.detach().reshape(-1)]


def leaf(*shape, scale=1.0, shift=0.0):
    return (torch.randn(*shape) * scale + shift).requires_grad_()


class Case:
    def __init__(self, c):
        self.c = c
        self.N, self.H = c["N"], c["H"]
        self.G = c.get("G", self.H)
        self.d = c.get("d_head", self.N // self.H)
        self.batched = True
        self.entries = []  # (name, tensor, batch_axis)
        self.weights = []  # (name, tensor) in attn's parameter order

    def rec(self, name, t, batch_axis=True):
        if t.requires_grad:
            t.retain_grad()
        self.entries.append((name, t, batch_axis))
        return t

    def weight(self, name, t):
        self.weights.append((name, t))
        return t

    # --- the steps -------------------------------------------------------------------------

    def rms(self, x, gamma):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.c.get("eps", 1e-5)) * gamma

    def norm(self, x, p):
        eps = self.c.get("eps", 1e-5)
        if self.c.get("norm") == "rmsnorm":
            return self.rms(x, p["gamma"])
        return F.layer_norm(x, (x.shape[-1],), p["gamma"], p["beta"], eps)

    def activation(self, pre, up):
        act = self.c.get("act", "relu")
        if act == "relu":
            return F.relu(pre)
        if act == "gelu":
            return F.gelu(pre)
        if act == "gelu_tanh":
            return F.gelu(pre, approximate="tanh")
        return F.silu(pre) * up  # swiglu

    def inverse_frequencies(self, d):
        """RoPE's inverse frequencies theta^(-2i/d), adjusted as transformers' modeling_rope_utils
        _compute_llama3_parameters does when the case has rope_scaling (in float64 here)."""
        inv_freq = 1.0 / (self.c["rope"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        s = self.c.get("rope_scaling")
        if not s:
            return inv_freq
        factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        old_context_len = s["original_max_position_embeddings"]
        low_freq_wavelen, high_freq_wavelen = old_context_len / low, old_context_len / high
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth_factor = (old_context_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        return torch.where(is_medium_freq, smoothed, inv_freq_llama)

    def rope(self, x):
        """(B, heads, S, d) rotated as Llama's apply_rotary_pos_emb (rotate-half pairs i, i + d/2)."""
        S, d = x.shape[2], x.shape[3]
        inv_freq = self.inverse_frequencies(d)
        angles = torch.outer(torch.arange(S, dtype=torch.float64), inv_freq)  # (S, d/2)
        emb = torch.cat((angles, angles), dim=-1)
        half = d // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * emb.cos() + rotated * emb.sin()

    def attention(self, prefix, x_q, x_kv, p, mask, rope):
        B, S, _ = x_q.shape
        Tk = x_kv.shape[1]
        H, G, d = self.H, self.G, self.d
        lin = lambda x, w, b: x @ p[w] + (p[b] if b in p else 0)

        def projected(x, name):  # x @ W recorded as "q", then + b_q as "q_biased" when the block has it
            y = self.rec(prefix + name, x @ p["W_" + name])
            return self.rec(prefix + name + "_biased", y + p["b_" + name]) if "b_" + name in p else y
        q = projected(x_q, "q")
        k = projected(x_kv, "k")
        v = projected(x_kv, "v")
        qh = self.rec(prefix + "q_heads", q.view(B, S, H, d).transpose(1, 2))
        kh = self.rec(prefix + "k_heads", k.view(B, Tk, G, d).transpose(1, 2))
        vh = self.rec(prefix + "v_heads", v.view(B, Tk, G, d).transpose(1, 2))
        if "q_norm" in p:  # Qwen3RMSNorm over each head's d numbers, before RoPE
            qh = self.rec(prefix + "q_normed", self.rms(qh, p["q_norm"]))
            kh = self.rec(prefix + "k_normed", self.rms(kh, p["k_norm"]))
        if rope:
            qh = self.rec(prefix + "q_rope", self.rope(qh))
            kh = self.rec(prefix + "k_rope", self.rope(kh))
        if G != H:
            kh = self.rec(prefix + "k_repeat", kh.repeat_interleave(H // G, dim=1))
            vh = self.rec(prefix + "v_repeat", vh.repeat_interleave(H // G, dim=1))
        kt = self.rec(prefix + "k_t", kh.transpose(-2, -1))
        scores = self.rec(prefix + "scores", qh @ kt)
        x = self.rec(prefix + "scaled_scores", scores / math.sqrt(d))
        if mask is not None:
            x = self.rec(prefix + "masked_scores", x + (mask if mask.dim() == 2 else mask[:, None, :, :]))
        full = torch.isneginf(x).all(dim=-1, keepdim=True)
        weights = self.rec(prefix + "weights", torch.softmax(x.masked_fill(full, 0.0), dim=-1).masked_fill(full, 0.0))
        context = self.rec(prefix + "context", weights @ vh)
        concat = self.rec(prefix + "concat", context.transpose(1, 2).reshape(B, S, H * d))
        return self.rec(prefix + "output", lin(concat, "W_o", "b_o"))

    def ffn(self, prefix, x, p):
        pre = x @ p["W_1"]
        up = x @ p["W_3"] if "W_3" in p else None
        hidden = self.rec(prefix + "hidden", self.activation(pre, up))
        return self.rec(prefix + "output", hidden @ p["W_2"])

    def sublayer(self, prefix, n, x, norm, f):
        if self.c.get("norm_first"):
            h = self.rec(f"{prefix}norm{n}", self.norm(x, norm))
            return self.rec(f"{prefix}residual{n}", x + f(h))
        r = self.rec(f"{prefix}residual{n}", x + f(x))
        return self.rec(f"{prefix}add_norm{n}", self.norm(r, norm))

    def mask(self, S, causal, window, padding):
        m = torch.zeros(S, S)
        if causal:
            m = m.masked_fill(torch.ones(S, S).triu(1).bool(), float("-inf"))
        if window:
            i = torch.arange(S)[:, None]
            j = torch.arange(S)[None, :]
            m = m.masked_fill((i - j >= window) | (j > i), float("-inf"))
        if not causal and not window:
            m = None
        return T.combined_mask(S, S, m, padding)

    # --- the parameters --------------------------------------------------------------------

    def norm_params(self, path):
        p = {"gamma": self.weight(path + ".gamma", leaf(self.N, scale=0.3, shift=1.0))}
        if self.c.get("norm") != "rmsnorm":
            p["beta"] = self.weight(path + ".beta", leaf(self.N, scale=0.3))
        return p

    def attention_params(self, path):
        N, H, G, d = self.N, self.H, self.G, self.d
        p = {}
        for w, cols in (("W_q", H * d), ("W_k", G * d), ("W_v", G * d)):
            p[w] = self.weight(f"{path}.{w}", leaf(N, cols, scale=1.2 / math.sqrt(N)))
        p["W_o"] = self.weight(f"{path}.W_o", leaf(H * d, N, scale=1.0 / math.sqrt(H * d)))
        for b in self.c.get("biases", ()):
            p[b] = self.weight(f"{path}.{b}", leaf(N if b == "b_o" else (H * d if b == "b_q" else G * d), scale=0.5))
        if self.c.get("qk_norm"):
            for w in ("q_norm", "k_norm"):
                p[w] = self.weight(f"{path}.{w}", leaf(d, scale=0.3, shift=1.0))
        return p

    def ffn_params(self, path):
        N, Fw = self.N, self.c["F"]
        p = {"W_1": self.weight(path + ".W_1", leaf(N, Fw, scale=1.0 / math.sqrt(N)))}
        p["W_2"] = self.weight(path + ".W_2", leaf(Fw, N, scale=1.0 / math.sqrt(Fw)))
        if self.c.get("act") == "swiglu":
            p["W_3"] = self.weight(path + ".W_3", leaf(N, Fw, scale=1.0 / math.sqrt(N)))
        return p


def attention_json(p):
    return {k: nested(v) for k, v in p.items()}


def make_case(c):
    torch.manual_seed(1500 + sum(map(ord, c["name"])))
    case = Case(c)
    N = case.N
    doc = {"comment": "", "model": {"d_model": N, "num_heads": case.H, "d_ff": c["F"]}}
    m = doc["model"]
    for key, name in (("norm", "norm"), ("act", "activation"), ("window", "sliding_window"), ("G", "num_kv_heads"),
                      ("eps", "layer_norm_eps"), ("rope", "rope_theta")):
        if key in c:
            m[name] = c[key]
    if "rope_scaling" in c:
        m["rope_scaling"] = dict(rope_type="llama3", **c["rope_scaling"])
    if c.get("qk_norm"):
        m["qk_norm"] = True
    m["norm_first"] = bool(c.get("norm_first"))
    m["causal"] = bool(c.get("causal"))
    if "d_head" in c:
        m["d_head"] = c["d_head"]
    m["positional_encoding"] = "rope" if "rope" in c else "none"
    if "rope_scaling" in c:  # the adjusted frequencies, once for the model
        case.rec("rope.inv_freq", case.inverse_frequencies(case.d), batch_axis=False)

    # the input: X, or tokens looked up (no positions added: RoPE or none)
    padding = None
    if "src" in c:
        case.batched = isinstance(c["src"][0], list)
        ids = T.token_ids(c["src"] if case.batched else [c["src"]])
        E = case.weight("embedding", leaf(len(VOCAB), N))
        doc["vocab"] = VOCAB
        doc["embedding"] = nested(E)
        doc["input"] = {"tokens": c["src"]}
        case.rec("tokens.ids", ids.to(torch.float64))
        padding = ids == PAD
        if bool(padding.any()):
            case.rec("tokens.padding_mask", padding.to(torch.float64))
        else:
            padding = None
        x = case.rec("embedding.lookup", E[ids])
    else:
        shape = c["X"]
        case.batched = len(shape) == 2
        x = torch.randn(*((shape[0], shape[1], N) if case.batched else (1, shape[0], N))).requires_grad_()
        doc["input"] = {"X": nested(x if case.batched else x[0])}
    x = case.rec("input", x)
    S = x.shape[1]
    # a window limits causal self-attention only (an encoder-decoder's encoder is not windowed)
    mask = case.mask(S, c.get("causal"), c.get("window") if c.get("causal") else None, padding)
    if mask is not None:
        case.rec("encoder.mask", mask, batch_axis=mask.dim() == 3)

    layers = []
    for i in range(c["layers"]):
        path = f"encoder.{i}"
        p = {"attention": case.attention_params(path + ".attention"), "norm1": case.norm_params(path + ".norm1"),
             "ffn": case.ffn_params(path + ".ffn"), "norm2": case.norm_params(path + ".norm2")}
        layers.append(p)
        pre = path + "."
        rope = "rope" in c
        x1 = case.sublayer(pre, 1, x, p["norm1"],
                           lambda h: case.attention(pre + "attention.", h, h, p["attention"], mask, rope))
        x2 = case.sublayer(pre, 2, x1, p["norm2"], lambda h: case.ffn(pre + "ffn.", h, p["ffn"]))
        x = case.rec(pre + "output", x2)
    doc["encoder"] = [{"attention": attention_json(p["attention"]), "norm1": attention_json(p["norm1"]),
                       "ffn": attention_json(p["ffn"]), "norm2": attention_json(p["norm2"])} for p in layers]
    if c.get("final_norm"):
        fn = case.norm_params("encoder_norm")
        doc["encoder_norm"] = attention_json(fn)
        x = case.rec("encoder.norm", case.norm(x, fn))

    if "tgt" in c:  # the decoder over the target, attending to the encoder's output
        memory, rope = x, "rope" in c
        tgt_ids = T.token_ids(c["tgt"] if case.batched else [c["tgt"]])
        doc["input"]["target_tokens"] = c["tgt"]
        case.rec("target_tokens.ids", tgt_ids.to(torch.float64))
        tgt_padding = tgt_ids == PAD
        if bool(tgt_padding.any()):
            case.rec("target_tokens.padding_mask", tgt_padding.to(torch.float64))
        else:
            tgt_padding = None
        y = case.rec("target_embedding.lookup", E[tgt_ids])
        y = case.rec("target_input", y)
        Tn = y.shape[1]
        self_mask = case.mask(Tn, True, c.get("window"), tgt_padding)
        case.rec("decoder.self_mask", self_mask, batch_axis=self_mask.dim() == 3)
        cross_mask = T.combined_mask(Tn, S, None, padding) if padding is not None else None
        if cross_mask is not None:
            case.rec("decoder.cross_mask", cross_mask)
        dec = []
        for j in range(c["dec_layers"]):
            path = f"decoder.{j}"
            p = {"self_attention": case.attention_params(path + ".self_attention"),
                 "norm1": case.norm_params(path + ".norm1"),
                 "cross_attention": case.attention_params(path + ".cross_attention"),
                 "norm2": case.norm_params(path + ".norm2"), "ffn": case.ffn_params(path + ".ffn"),
                 "norm3": case.norm_params(path + ".norm3")}
            dec.append(p)
            pre = path + "."
            y1 = case.sublayer(pre, 1, y, p["norm1"], lambda h: case.attention(
                pre + "self_attention.", h, h, p["self_attention"], self_mask, rope))
            y2 = case.sublayer(pre, 2, y1, p["norm2"], lambda h: case.attention(
                pre + "cross_attention.", h, memory, p["cross_attention"], cross_mask, False))
            y3 = case.sublayer(pre, 3, y2, p["norm3"], lambda h: case.ffn(pre + "ffn.", h, p["ffn"]))
            y = case.rec(pre + "output", y3)
        doc["decoder"] = [{k: attention_json(v) for k, v in p.items()} for p in dec]
        if c.get("dec_final_norm"):
            fn = case.norm_params("decoder_norm")
            doc["decoder_norm"] = attention_json(fn)
            y = case.rec("decoder.norm", case.norm(y, fn))
        x = y

    # the loss: cross-entropy of the labels through an output head, or sum(output * output_grad)
    if "labels" in c:
        if c.get("output") == "tied":
            doc["output"] = "tied"
            logits = x @ case.weights[0][1].T
        else:
            W = case.weight("output.W", leaf(N, len(VOCAB), scale=1.0 / math.sqrt(N)))
            doc["output"] = {"W": nested(W)}
            logits = x @ W
        logits = case.rec("output.logits", logits)
        case.rec("output.probabilities", torch.softmax(logits, dim=-1))
        labels = T.token_ids(c["labels"] if case.batched else [c["labels"]])
        doc["input"]["labels"] = c["labels"]
        loss = F.cross_entropy(logits.reshape(-1, len(VOCAB)), labels.reshape(-1), ignore_index=PAD)
    else:
        g = torch.randn(x.shape)
        doc["input"]["output_grad"] = nested(g if case.batched else g[0])
        loss = (x * g).sum()
    loss.backward()

    def shaped(t, batch_axis):
        if not case.batched and batch_axis:
            assert t.shape[0] == 1
            return t[0]
        return t

    tensors = [{"name": n, "shape": list(shaped(t, b).shape), "data": flat(shaped(t, b))} for n, t, b in case.entries]
    tensors.append({"name": "loss", "shape": [], "data": [float(loss)]})
    for n, t, b in case.entries:
        if t.grad is not None and n != "output.probabilities":
            tensors.append({"name": "grad." + n, "shape": list(shaped(t.grad, b).shape),
                            "data": flat(shaped(t.grad, b))})
    for n, t in case.weights:
        tensors.append({"name": "grad." + n, "shape": list(t.shape), "data": flat(t.grad)})

    features = [f"{k}={c[k]}" for k in ("norm", "act", "rope", "rope_scaling", "G", "window", "causal", "norm_first",
                                           "final_norm", "qk_norm")
                if k in c]
    description = (f"encoder stack of {c['layers']}, d_model {N}, {case.H} heads of {case.d}, "
                   f"{'batched' if case.batched else 'unbatched'}, {', '.join(features)}; "
                   f"{'labels' if 'labels' in c else 'output_grad'}; forward and autograd by PyTorch "
                   f"{torch.__version__}, float64")
    doc["comment"] = "Generated by tests/reference/make_torch_variant_cases.py: " + description
    return doc, {"case": c["name"], "description": description, "batched": case.batched, "tensors": tensors}


def main():
    T.write_cases(OUT_DIR, CASES, lambda i, c: make_case(c))


if __name__ == "__main__":
    main()
