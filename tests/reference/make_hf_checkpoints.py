#!/usr/bin/env python3
"""Tiny Hugging Face checkpoints and what their models compute, for tests/checkpoint/.

For each architecture attn reads (GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM,
Qwen2ForCausalLM, Qwen3ForCausalLM) this writes folders as transformers' save_pretrained
would: config.json, model.safetensors (or two shards and model.safetensors.index.json),
sometimes generation_config.json. The safetensors files are written by hand (8 bytes of
header length, the JSON header padded with spaces to a multiple of 8, the raw data), in
F32, F16, BF16 or F64, with GPT-2's keys with and without the "transformer." prefix, the
old checkpoints' attn.bias / attn.masked_bias buffers, tied and untied heads.

expected.json holds the token ids run, the logits (S, V) and every layer's attention
weights (H, S, S), and greedy generation from a prompt (each step's logits and pick),
computed in float64 by the functions below, which follow transformers'
modeling_gpt2.py (GPT2Attention, GPT2MLP, Conv1D, NewGELUActivation) and modeling_llama.py /
modeling_qwen2.py / modeling_qwen3.py (LlamaRMSNorm, rotate_half, apply_rotary_pos_emb,
repeat_kv, eager_attention_forward, LlamaMLP, q_norm/k_norm, the llama3 rope init) step by
step, on the stored values widened exactly to float64. (Hugging Face's own modules compute
RMSNorm and the RoPE angles in float32 even for a float64 model; here they are float64
throughout, the architecture's definition evaluated exactly, as attn does.)

hf_checkpoints_bin.py then writes pytorch_model.bin versions of some cases with torch.save
(zip and legacy formats, sharded, tied heads), listed in bin_cases.txt.

With --attn PATH/TO/attn, each case is also written as an attn model file (attn.json,
attn's JSON schema, every weight as numbers) and run by `attn explain --dump -`: the
reference and attn's own forward must agree to 1e-12 before anything is written.

Run from the repository: python3 tests/reference/make_hf_checkpoints.py [--attn build/attn]
(--seq2seq: the MarianMTModel and BartForConditionalGeneration cases of hf_seq2seq.py, alone.)
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import out_dir, write_case_list, write_json  # noqa: E402
from hf_checkpoints_bin import make_bin_cases  # noqa: E402

torch.set_default_dtype(torch.float64)
OUT = out_dir("hf_checkpoints")
IDS = [3, 14, 1, 7, 7, 0, 11]  # the token ids every case runs (S = 7)
PROMPT, GENERATED = IDS[:3], 5  # greedy generation: 3 tokens of prompt, 5 generated (8 positions)

# ---- safetensors, by hand -------------------------------------------------------------


def stored(values, dtype):
    """(raw little-endian bytes, the stored values widened exactly to float64)."""
    a = np.asarray(values, dtype=np.float64)
    if dtype == "F64":
        s = a
    elif dtype == "F32":
        s = a.astype(np.float32)
    elif dtype == "F16":
        s = a.astype(np.float16)
    elif dtype == "BF16":
        bits = torch.from_numpy(a).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        wide = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).to(torch.float64).numpy()
        return bits.astype("<u2").tobytes(), wide
    else:
        raise ValueError(dtype)
    return s.astype(s.dtype.newbyteorder("<")).tobytes(), s.astype(np.float64)


def safetensors_file(path, tensors):
    """tensors: [(name, dtype, shape, raw bytes)] in the order their data is laid out."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def write_checkpoint(folder, weights, dtype, shards=1):
    """weights: {name: float64 array}; returns {name: the stored values as float64 tensors}."""
    entries, exact = [], {}
    for name, value in weights.items():
        # GPT-2's causal-mask buffers are stored as they were in the old checkpoints (F32 /
        # BOOL-like), never read by attn.
        d = "F32" if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias") else dtype
        data, wide = stored(value, d)
        entries.append((name, d, value.shape, data))
        exact[name] = torch.from_numpy(np.array(wide).reshape(value.shape))
    if shards == 1:
        safetensors_file(os.path.join(folder, "model.safetensors"), entries)
        return exact
    per = math.ceil(len(entries) / shards)
    weight_map, total = {}, 0
    for k in range(shards):
        name = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = entries[k * per:(k + 1) * per]
        safetensors_file(os.path.join(folder, name), part)
        for t in part:
            weight_map[t[0]] = name
            total += len(t[3])
    write_json(os.path.join(folder, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2)
    return exact


# ---- GPT-2, as modeling_gpt2.py ---------------------------------------------------------


def gelu_new(x):  # NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def conv1d(x, w, b):  # Conv1D: weight (nx, nf), x @ W + b
    return torch.addmm(b, x.view(-1, x.size(-1)), w).view(x.size()[:-1] + (w.size(-1),))


def gpt2_forward(c, w, ids, prefix):
    p = prefix
    N, H = c["n_embd"], c["n_head"]
    d, eps = N // H, c["layer_norm_epsilon"]
    S = len(ids)
    h = w[p + "wte.weight"][ids] + w[p + "wpe.weight"][torch.arange(S)]
    h = h[None]  # (1, S, N)
    causal = torch.tril(torch.ones(S, S, dtype=torch.bool))
    attentions = []
    for i in range(c["n_layer"]):
        L = f"{p}h.{i}."
        residual = h
        x = torch.nn.functional.layer_norm(h, (N,), w[L + "ln_1.weight"], w[L + "ln_1.bias"], eps)
        q, k, v = conv1d(x, w[L + "attn.c_attn.weight"], w[L + "attn.c_attn.bias"]).split(N, dim=2)
        q, k, v = (t.view(1, S, H, d).transpose(1, 2) for t in (q, k, v))
        a = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5)
        a = torch.where(causal, a, torch.tensor(torch.finfo(a.dtype).min))
        a = torch.nn.functional.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, S, N)
        h = residual + conv1d(o, w[L + "attn.c_proj.weight"], w[L + "attn.c_proj.bias"])
        residual = h
        x = torch.nn.functional.layer_norm(h, (N,), w[L + "ln_2.weight"], w[L + "ln_2.bias"], eps)
        m = gelu_new(conv1d(x, w[L + "mlp.c_fc.weight"], w[L + "mlp.c_fc.bias"]))
        h = residual + conv1d(m, w[L + "mlp.c_proj.weight"], w[L + "mlp.c_proj.bias"])
    h = torch.nn.functional.layer_norm(h, (N,), w[p + "ln_f.weight"], w[p + "ln_f.bias"], eps)
    head = w[p + "wte.weight"] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return (h @ head.T)[0], attentions


def gpt2_weights(c, rng, prefix, buffers):
    N, F, V, P = c["n_embd"], c.get("n_inner") or 4 * c["n_embd"], c["vocab_size"], c["n_positions"]
    r = lambda *shape, s=0.5: rng.standard_normal(shape) * s  # noqa: E731
    w = {prefix + "wte.weight": r(V, N), prefix + "wpe.weight": r(P, N, s=0.3)}
    for i in range(c["n_layer"]):
        L = f"{prefix}h.{i}."
        w[L + "ln_1.weight"], w[L + "ln_1.bias"] = 1 + r(N, s=0.2), r(N, s=0.1)
        if buffers:
            w[L + "attn.bias"] = np.tril(np.ones((P, P)))[None, None]
            w[L + "attn.masked_bias"] = np.array(-1e4)
        w[L + "attn.c_attn.weight"], w[L + "attn.c_attn.bias"] = r(N, 3 * N), r(3 * N, s=0.1)
        w[L + "attn.c_proj.weight"], w[L + "attn.c_proj.bias"] = r(N, N), r(N, s=0.1)
        w[L + "ln_2.weight"], w[L + "ln_2.bias"] = 1 + r(N, s=0.2), r(N, s=0.1)
        w[L + "mlp.c_fc.weight"], w[L + "mlp.c_fc.bias"] = r(N, F), r(F, s=0.1)
        w[L + "mlp.c_proj.weight"], w[L + "mlp.c_proj.bias"] = r(F, N), r(N, s=0.1)
    w[prefix + "ln_f.weight"], w[prefix + "ln_f.bias"] = 1 + r(N, s=0.2), r(N, s=0.1)
    if not c.get("tie_word_embeddings", True):
        w["lm_head.weight"] = r(V, N)
    return w


# ---- Llama, Qwen2, Qwen3, as modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py ----


def rms_norm(x, weight, eps):  # LlamaRMSNorm (float64 throughout)
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def inv_frequencies(c, d):
    """_compute_default_rope_parameters, then _compute_llama3_parameters when rope_type is llama3."""
    inv_freq = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, d, 2, dtype=torch.int64).double() / d))
    s = c.get("rope_scaling")
    if not s or s.get("rope_type", s.get("type")) != "llama3":
        return inv_freq
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old_context_len = s["original_max_position_embeddings"]
    low_freq_wavelen, high_freq_wavelen = old_context_len / low, old_context_len / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low) / (high - low)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def linear(x, w, b=None):  # nn.Linear: weight (out, in), x @ W^T + b
    return torch.nn.functional.linear(x, w, b)


def llama_forward(c, w, ids, arch):
    N, H = c["hidden_size"], c["num_attention_heads"]
    G = c.get("num_key_value_heads") or H
    d = c.get("head_dim") or N // H
    eps = c.get("rms_norm_eps", 1e-6)
    S = len(ids)
    positions = torch.arange(S).double()
    freqs = torch.outer(positions, inv_frequencies(c, d))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    mask = torch.triu(torch.full((S, S), torch.finfo(torch.float64).min), diagonal=1)
    qkv_bias = arch == "Qwen2ForCausalLM" or c.get("attention_bias", False)
    o_bias = arch != "Qwen2ForCausalLM" and c.get("attention_bias", False)
    h = w["model.embed_tokens.weight"][ids][None]
    attentions = []
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        bias = lambda n: w[L + f"self_attn.{n}.bias"] if qkv_bias else None  # noqa: E731
        residual = h
        x = rms_norm(h, w[L + "input_layernorm.weight"], eps)
        q = linear(x, w[L + "self_attn.q_proj.weight"], bias("q_proj")).view(1, S, -1, d)
        k = linear(x, w[L + "self_attn.k_proj.weight"], bias("k_proj")).view(1, S, -1, d)
        v = linear(x, w[L + "self_attn.v_proj.weight"], bias("v_proj")).view(1, S, -1, d).transpose(1, 2)
        if arch == "Qwen3ForCausalLM":
            q, k = rms_norm(q, w[L + "self_attn.q_norm.weight"], eps), rms_norm(k, w[L + "self_attn.k_norm.weight"], eps)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = (t[:, :, None].expand(1, G, H // G, S, d).reshape(1, H, S, d) for t in (k, v))  # repeat_kv
        a = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + mask
        a = torch.nn.functional.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, S, -1)
        h = residual + linear(o, w[L + "self_attn.o_proj.weight"], w[L + "self_attn.o_proj.bias"] if o_bias else None)
        residual = h
        x = rms_norm(h, w[L + "post_attention_layernorm.weight"], eps)
        g = torch.nn.functional.silu(linear(x, w[L + "mlp.gate_proj.weight"])) * linear(x, w[L + "mlp.up_proj.weight"])
        h = residual + linear(g, w[L + "mlp.down_proj.weight"])
    h = rms_norm(h, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if c.get("tie_word_embeddings", False) else w["lm_head.weight"]
    return (h @ head.T)[0], attentions


def llama_weights(c, rng, arch):
    N, F, V, H = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_attention_heads"]
    G = c.get("num_key_value_heads") or H
    d = c.get("head_dim") or N // H
    r = lambda *shape, s=0.5: rng.standard_normal(shape) * s  # noqa: E731
    qkv_bias = arch == "Qwen2ForCausalLM" or c.get("attention_bias", False)
    w = {"model.embed_tokens.weight": r(V, N)}
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        w[L + "input_layernorm.weight"] = 1 + r(N, s=0.2)
        for name, rows in (("q_proj", H * d), ("k_proj", G * d), ("v_proj", G * d)):
            w[L + f"self_attn.{name}.weight"] = r(rows, N)
            if qkv_bias:
                w[L + f"self_attn.{name}.bias"] = r(rows, s=0.2)
        w[L + "self_attn.o_proj.weight"] = r(N, H * d)
        if arch != "Qwen2ForCausalLM" and c.get("attention_bias", False):
            w[L + "self_attn.o_proj.bias"] = r(N, s=0.1)
        if arch == "Qwen3ForCausalLM":
            w[L + "self_attn.q_norm.weight"], w[L + "self_attn.k_norm.weight"] = 1 + r(d, s=0.2), 1 + r(d, s=0.2)
        w[L + "post_attention_layernorm.weight"] = 1 + r(N, s=0.2)
        w[L + "mlp.gate_proj.weight"], w[L + "mlp.up_proj.weight"] = r(F, N), r(F, N)
        w[L + "mlp.down_proj.weight"] = r(N, F)
    w["model.norm.weight"] = 1 + r(N, s=0.2)
    if not c.get("tie_word_embeddings", False):
        w["lm_head.weight"] = r(V, N)
    return w


# ---- the same models in attn's JSON schema (for the one check against attn's forward) ----


def attn_model_file(c, w, arch, prefix):
    """The checkpoint as an attn model file: X @ W weights, every number written out."""
    L = lambda t: t.tolist()  # noqa: E731
    V = c["vocab_size"]
    vocab = [f"w{i}" for i in range(V)]
    if arch == "GPT2LMHeadModel":
        N, F = c["n_embd"], c.get("n_inner") or 4 * c["n_embd"]
        model = {"architecture": "decoder-only", "d_model": N, "num_heads": c["n_head"], "d_ff": F,
                 "norm_first": True, "activation": "gelu_tanh", "positional_encoding": "learned",
                 "max_len": c["n_positions"], "layer_norm_eps": c["layer_norm_epsilon"]}
        layers = []
        for i in range(c["n_layer"]):
            p = f"{prefix}h.{i}."
            qkv, b = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
            layers.append({
                "self_attention": {"W_q": L(qkv[:, :N]), "W_k": L(qkv[:, N:2 * N]), "W_v": L(qkv[:, 2 * N:]),
                                   "W_o": L(w[p + "attn.c_proj.weight"]), "b_q": L(b[:N]), "b_k": L(b[N:2 * N]),
                                   "b_v": L(b[2 * N:]), "b_o": L(w[p + "attn.c_proj.bias"])},
                "norm1": {"gamma": L(w[p + "ln_1.weight"]), "beta": L(w[p + "ln_1.bias"])},
                "ffn": {"W_1": L(w[p + "mlp.c_fc.weight"]), "b_1": L(w[p + "mlp.c_fc.bias"]),
                        "W_2": L(w[p + "mlp.c_proj.weight"]), "b_2": L(w[p + "mlp.c_proj.bias"])},
                "norm2": {"gamma": L(w[p + "ln_2.weight"]), "beta": L(w[p + "ln_2.bias"])}})
        out = {"model": model, "vocab": vocab, "embedding": L(w[prefix + "wte.weight"]),
               "positions": L(w[prefix + "wpe.weight"]), "decoder": layers,
               "decoder_norm": {"gamma": L(w[prefix + "ln_f.weight"]), "beta": L(w[prefix + "ln_f.bias"])}}
        head = None if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    else:
        N, H = c["hidden_size"], c["num_attention_heads"]
        model = {"architecture": "decoder-only", "d_model": N, "num_heads": H,
                 "d_head": c.get("head_dim") or N // H, "num_kv_heads": c.get("num_key_value_heads") or H,
                 "d_ff": c["intermediate_size"], "norm": "rmsnorm", "norm_first": True,
                 "layer_norm_eps": c.get("rms_norm_eps", 1e-6), "activation": "swiglu",
                 "positional_encoding": "rope", "rope_theta": c.get("rope_theta", 10000.0)}
        if c.get("rope_scaling"):  # the llama3 frequency step
            model["rope_scaling"] = {k: c["rope_scaling"][k] for k in (
                "rope_type", "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")}
        if arch == "Qwen3ForCausalLM":  # the QK-norm step
            model["qk_norm"] = True
        layers = []
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            a = {k: L(w[p + f"self_attn.{n}_proj.weight"].T) for k, n in (("W_q", "q"), ("W_k", "k"), ("W_v", "v"),
                                                                          ("W_o", "o"))}
            for k, n in (("b_q", "q"), ("b_k", "k"), ("b_v", "v"), ("b_o", "o")):
                if p + f"self_attn.{n}_proj.bias" in w:
                    a[k] = L(w[p + f"self_attn.{n}_proj.bias"])
            for k in ("q_norm", "k_norm"):
                if p + f"self_attn.{k}.weight" in w:
                    a[k] = L(w[p + f"self_attn.{k}.weight"])
            layers.append({"self_attention": a, "norm1": {"gamma": L(w[p + "input_layernorm.weight"])},
                           "ffn": {"W_1": L(w[p + "mlp.gate_proj.weight"].T), "W_2": L(w[p + "mlp.down_proj.weight"].T),
                                   "W_3": L(w[p + "mlp.up_proj.weight"].T)},
                           "norm2": {"gamma": L(w[p + "post_attention_layernorm.weight"])}})
        out = {"model": model, "vocab": vocab, "embedding": L(w["model.embed_tokens.weight"]), "decoder": layers,
               "decoder_norm": {"gamma": L(w["model.norm.weight"])}}
        head = None if c.get("tie_word_embeddings", False) else w["lm_head.weight"]
    out["output"] = "tied" if head is None else {"W": L(head.T)}
    out["input"] = {"tokens": [vocab[i] for i in IDS]}
    return out


def check_against_attn(attn, folder, attn_file, logits, attentions):
    """attn's own forward on the same model must agree with the reference to 1e-12."""
    path = os.path.join(folder, "attn.json")
    write_json(path, attn_file)
    run = subprocess.run([attn, "explain", "-c", path, "--quiet", "--dump", "-"], capture_output=True, text=True,
                         check=True)
    os.remove(path)
    tensors = {t["name"]: np.array(t["data"], dtype=float) for t in json.loads(run.stdout)["tensors"]}
    worst = np.abs(tensors["output.logits"].reshape(logits.shape) - logits.numpy()).max()
    for i, a in enumerate(attentions):
        got = tensors[f"decoder.{i}.self_attention.weights"].reshape(a.shape)
        worst = max(worst, np.abs(got - a.numpy()).max())
    if not worst <= 1e-12:
        sys.exit(f"{folder}: attn's own forward differs from the reference by {worst}")
    return worst


# ---- the cases ------------------------------------------------------------------------

GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 16, "n_positions": 8, "n_embd": 8,
        "n_layer": 2, "n_head": 2, "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "bos_token_id": 15, "eos_token_id": 15}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 16, "hidden_size": 8,
         "intermediate_size": 12, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "max_position_embeddings": 16, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_scaling": None,
         "hidden_act": "silu", "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
         "bos_token_id": 1, "eos_token_id": 2}


def variant(base, **changes):
    c = dict(base)
    c.update(changes)
    return c


# (name, config, dtype, options): prefix (GPT-2's "transformer."), buffers (the old
# attn.bias/masked_bias), shards, a generation_config.json.
CASES = [
    ("gpt2_f32", GPT2, "F32", {"buffers": True}),
    ("gpt2_f16_prefixed", GPT2, "F16", {"prefix": "transformer."}),
    ("gpt2_bf16_prefixed", GPT2, "BF16", {"prefix": "transformer."}),
    ("gpt2_f64", GPT2, "F64", {}),
    ("gpt2_f32_sharded", GPT2, "F32", {"shards": 2, "prefix": "transformer."}),
    ("gpt2_f32_untied", variant(GPT2, tie_word_embeddings=False, n_inner=12, activation_function="gelu_pytorch_tanh"),
     "F32", {"prefix": "transformer."}),
    ("llama_f32", LLAMA, "F32", {"generation": {"eos_token_id": [2, 5]}}),
    ("llama_f16_tied", variant(LLAMA, tie_word_embeddings=True, num_key_value_heads=1), "F16", {}),
    ("llama_bf16", variant(LLAMA, rope_theta=500.0), "BF16", {}),
    ("llama_f64_head_dim", variant(LLAMA, head_dim=6), "F64", {}),
    ("llama_f32_sharded", LLAMA, "F32", {"shards": 3}),
    ("llama3_rope_f32", variant(LLAMA, rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                     "original_max_position_embeddings": 4, "rope_type": "llama3"},
                                rope_theta=500000.0, head_dim=16), "F32", {}),
    ("mistral_f32", variant(LLAMA, architectures=["MistralForCausalLM"], model_type="mistral", sliding_window=None),
     "F32", {}),
    ("qwen2_f32", variant(LLAMA, architectures=["Qwen2ForCausalLM"], model_type="qwen2", use_sliding_window=False,
                          tie_word_embeddings=True), "F32", {}),
    ("qwen2_bf16", variant(LLAMA, architectures=["Qwen2ForCausalLM"], model_type="qwen2", use_sliding_window=False),
     "BF16", {}),
    ("qwen3_f32", variant(LLAMA, architectures=["Qwen3ForCausalLM"], model_type="qwen3", head_dim=4,
                          use_sliding_window=False, tie_word_embeddings=True), "F32", {}),
    # Issue 31: an untied head stored as BF16, in shards, with a vocabulary large beside its
    # one layer: the estimate took the head's stored numbers back before counting them and
    # wrapped to 2^64 ("would need about 17179869184.0 GiB").
    ("llama_bf16_untied_sharded", variant(LLAMA, vocab_size=1536, num_hidden_layers=1), "BF16",
     {"shards": 2, "seed": 22100}),
]


def greedy(forward):
    """Greedy generation from PROMPT, the whole prefix run every step (no cache): each step's
    last-position logits and the id argmax picks."""
    ids, steps = list(PROMPT), []
    for _ in range(GENERATED):
        last = forward(torch.tensor(ids))[0][-1]
        steps.append({"logits": last.tolist(), "id": int(torch.argmax(last))})
        ids.append(steps[-1]["id"])
    return steps


def make_case(name, config, dtype, options, seed, attn):
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    arch = config["architectures"][0]
    rng = np.random.default_rng(options.get("seed", seed))
    prefix = options.get("prefix", "")
    if arch == "GPT2LMHeadModel":
        weights = gpt2_weights(config, rng, prefix, options.get("buffers", False))
    else:
        weights = llama_weights(config, rng, arch)
    exact = write_checkpoint(folder, weights, dtype, options.get("shards", 1))
    write_json(os.path.join(folder, "config.json"), dict(config, torch_dtype="float32"), indent=2)
    if "generation" in options:
        write_json(os.path.join(folder, "generation_config.json"), options["generation"], indent=2)
    ids = torch.tensor(IDS)
    if arch == "GPT2LMHeadModel":
        logits, attentions = gpt2_forward(config, exact, ids, prefix)
    else:
        logits, attentions = llama_forward(config, exact, ids, arch)
    forward = (lambda t: gpt2_forward(config, exact, t, prefix)) if arch == "GPT2LMHeadModel" else (
        lambda t: llama_forward(config, exact, t, arch))
    steps = greedy(forward)
    note = ""
    if attn:
        note = f", attn's own forward within {check_against_attn(attn, folder, attn_model_file(config, exact, arch, prefix), logits, attentions):.1e}"
    write_json(os.path.join(folder, "expected.json"),
               {"ids": IDS, "logits": logits.tolist(), "attention_weights": [a.tolist() for a in attentions],
                "prompt": PROMPT, "greedy": steps})
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: {size} bytes{note}")


# ---- GPT-2's real tokenizer beside small random weights --------------------------------

TOKENIZER_CASE = "gpt2_tokenizer_f16"
TOKENIZER_TEXT = "The cat sat on the mat"
TOP = 20  # the logits kept per position: the largest TOP (V = 50257 is too many to commit)
GPT2_REAL = variant(GPT2, vocab_size=50257, n_positions=16, n_embd=4, n_head=2, n_inner=16, bos_token_id=50256,
                    eos_token_id=50256)


def top_logits(row):
    values, ids = torch.topk(row, TOP)
    return {"ids": ids.tolist(), "logits": values.tolist()}


def make_tokenizer_case(seed):
    """GPT-2's own vocab.json and merges.txt (tests/data/gpt2, linked as the Hub cache links a
    snapshot's files to its blobs) beside random F16 weights: the ids run are gpt-3-encoder's
    (tests/reference/tokenizers/gpt2.json), not ours; expected.json keeps each position's
    largest logits, every attention weight, and greedy generation's picks."""
    folder = os.path.join(OUT, TOKENIZER_CASE)
    os.makedirs(folder)
    for name in ("vocab.json", "merges.txt"):
        os.symlink(os.path.join("..", "..", "..", "data", "gpt2", name), os.path.join(folder, name))
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers", "gpt2.json")) as f:
        reference = json.load(f)
    ids = next(c["ids"] for c in reference["cases"] if c["text"] == TOKENIZER_TEXT)
    exact = write_checkpoint(folder, gpt2_weights(GPT2_REAL, np.random.default_rng(seed), "", False), "F16")
    write_json(os.path.join(folder, "config.json"), dict(GPT2_REAL, torch_dtype="float16"), indent=2)
    forward = lambda t: gpt2_forward(GPT2_REAL, exact, t, "")  # noqa: E731
    logits, attentions = forward(torch.tensor(ids))
    steps, prefix = [], list(ids)
    for _ in range(GENERATED):
        last = forward(torch.tensor(prefix))[0][-1]
        steps.append(dict(top_logits(last), id=int(torch.argmax(last))))
        prefix.append(steps[-1]["id"])
    write_json(os.path.join(folder, "expected.json"),
               {"text": TOKENIZER_TEXT, "ids": ids, "ids_from": reference["source"],
                "top_logits": [top_logits(row) for row in logits], "attention_weights": [a.tolist() for a in attentions],
                "greedy": steps})
    print(f"{TOKENIZER_CASE}: ids {ids}, greedy {[s['id'] for s in steps]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attn", help="the attn binary, to check the reference against attn's own forward")
    parser.add_argument("--seq2seq", action="store_true",
                        help="write only the encoder-decoder cases (Marian, BART: hf_seq2seq.py) into hf_seq2seq/")
    args = parser.parse_args()
    if args.seq2seq:
        import hf_seq2seq
        hf_seq2seq.make_all(args.attn, write_checkpoint, 33000)
        return
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for k, (name, config, dtype, options) in enumerate(CASES):
        make_case(name, config, dtype, options, 22000 + k, args.attn)
    write_case_list(OUT, [c[0] for c in CASES])  # the placeholder-token cases
    make_tokenizer_case(22016)  # its seed since it came after the first 16 cases
    make_bin_cases(OUT)  # pytorch_model.bin versions of some cases (hf_checkpoints_bin.py)


if __name__ == "__main__":
    main()
