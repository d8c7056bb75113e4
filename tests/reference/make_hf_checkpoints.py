#!/usr/bin/env python3
"""Tiny Hugging Face checkpoints and what their models compute, for tests/checkpoint/.

For each architecture attn reads (GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM,
Qwen2ForCausalLM, Qwen3ForCausalLM; BertForMaskedLM, BertForPreTraining and BertModel, whose
cases hf_bert.py computes and bert_cases.txt lists) this writes folders as transformers' save_pretrained
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
import hf_families  # noqa: E402
import hf_bert  # noqa: E402
from torch_common import out_dir, write_case_list, write_json  # noqa: E402
import hf_checkpoints_bin  # noqa: E402
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
        if np.asarray(value).dtype == np.int64:  # BERT's position_ids buffer, never read by attn
            entries.append((name, "I64", value.shape, value.astype("<i8").tobytes()))
            exact[name] = torch.from_numpy(value)
            continue
        if value.dtype == bool:  # GPT-Neo's and GPT-NeoX's mask buffers, as torch saves a bool tensor
            entries.append((name, "BOOL", value.shape, value.astype(np.uint8).tobytes()))
            continue
        # The causal-mask buffers (GPT-2's attn.bias, attn.masked_bias; GPT-Neo's and NeoX's
        # masked_bias, NeoX's rotary_emb.inv_freq) are stored F32 as the old checkpoints
        # keep them, never read by attn.
        buffer = name.endswith((".attn.bias", ".masked_bias", ".inv_freq"))
        d = "F32" if buffer else dtype
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


def causal_mask_function(q_idx, kv_idx):  # masking_utils.causal_mask_function
    return kv_idx <= q_idx


def sliding_window_overlay(sliding_window):  # masking_utils.sliding_window_overlay
    return lambda q_idx, kv_idx: kv_idx > q_idx - sliding_window


def additive_mask(S, window=None):
    """masking_utils' causal (and_masks with the sliding window overlay when window is set)
    mask over S positions, as the eager attention adds it: 0 where seen, float64's min where not."""
    q, kv = torch.arange(S)[:, None], torch.arange(S)[None, :]
    seen = causal_mask_function(q, kv)
    if window is not None:
        seen = seen & sliding_window_overlay(window)(q, kv)
    return torch.where(seen, torch.tensor(0.0), torch.tensor(torch.finfo(torch.float64).min))


def llama_forward(c, w, ids, arch, norm=None, mlp=None, embed=None):
    """modeling_llama.py's forward (Mistral's with its sliding window). norm(h, key), mlp(x, L)
    and embed(ids) replace LlamaRMSNorm, LlamaMLP and the embedding lookup when given: the
    other families' references are checked against this one through them."""
    N, H = c["hidden_size"], c["num_attention_heads"]
    G = c.get("num_key_value_heads") or H
    d = c.get("head_dim") or N // H
    eps = c.get("rms_norm_eps", 1e-6)
    norm = norm or (lambda h, key: rms_norm(h, w[key + ".weight"], eps))
    S = len(ids)
    positions = torch.arange(S).double()
    freqs = torch.outer(positions, inv_frequencies(c, d))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    window = c.get("sliding_window") if arch == "MistralForCausalLM" else None
    mask = additive_mask(S, window)
    qkv_bias = arch == "Qwen2ForCausalLM" or c.get("attention_bias", False)
    o_bias = arch != "Qwen2ForCausalLM" and c.get("attention_bias", False)
    h = (embed(ids) if embed else w["model.embed_tokens.weight"][ids])[None]
    attentions = []
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        bias = lambda n: w[L + f"self_attn.{n}.bias"] if qkv_bias else None  # noqa: E731
        residual = h
        x = norm(h, L + "input_layernorm")
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
        x = norm(h, L + "post_attention_layernorm")
        if mlp:
            h = residual + mlp(x, L)
            continue
        g = torch.nn.functional.silu(linear(x, w[L + "mlp.gate_proj.weight"])) * linear(x, w[L + "mlp.up_proj.weight"])
        h = residual + linear(g, w[L + "mlp.down_proj.weight"])
    h = norm(h, "model.norm")
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
        if arch == "MistralForCausalLM" and c.get("sliding_window"):  # the window of every layer
            model["sliding_window"] = c["sliding_window"]
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


# Issue 34's families (hf_families.py): each a tiny config, then its cases.
GPT_NEO = {"architectures": ["GPTNeoForCausalLM"], "model_type": "gpt_neo", "vocab_size": 16,
           "max_position_embeddings": 8, "hidden_size": 8, "num_layers": 2, "num_heads": 2,
           "attention_types": [[["global", "local"], 1]], "window_size": 3, "intermediate_size": None,
           "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": 15, "eos_token_id": 15}
NEOX = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "vocab_size": 16, "hidden_size": 16,
        "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 24, "hidden_act": "gelu",
        "rotary_pct": 0.25, "rotary_emb_base": 10000, "max_position_embeddings": 16, "layer_norm_eps": 1e-5,
        "use_parallel_residual": True, "tie_word_embeddings": False, "attention_bias": True, "rope_scaling": None,
        "bos_token_id": 0, "eos_token_id": 2}
GEMMA = {"architectures": ["GemmaForCausalLM"], "model_type": "gemma", "vocab_size": 16, "hidden_size": 8,
         "intermediate_size": 12, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
         "head_dim": 6, "hidden_act": "gelu", "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 16,
         "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "attention_bias": False, "tie_word_embeddings": True,
         "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 1}
PHI = {"architectures": ["PhiForCausalLM"], "model_type": "phi", "vocab_size": 16, "hidden_size": 16,
       "intermediate_size": 20, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": None,
       "hidden_act": "gelu_new", "max_position_embeddings": 16, "layer_norm_eps": 1e-5, "tie_word_embeddings": False,
       "rope_theta": 10000.0, "rope_scaling": None, "partial_rotary_factor": 0.5, "qk_layernorm": False,
       "bos_token_id": 1, "eos_token_id": 2}
MISTRAL_WINDOW = variant(LLAMA, architectures=["MistralForCausalLM"], model_type="mistral", sliding_window=3)
MISTRAL_DEFAULT = {k: v for k, v in variant(LLAMA, architectures=["MistralForCausalLM"], model_type="mistral").items()}

# (its weights, its forward, attn's names of its weights' gradients) by class
FAMILIES = {
    "GPTNeoForCausalLM": (hf_families.gpt_neo_weights, hf_families.gpt_neo_forward, hf_families.gpt_neo_attn_names),
    "GPTNeoXForCausalLM": (hf_families.gpt_neox_weights, hf_families.gpt_neox_forward,
                           hf_families.gpt_neox_attn_names),
    "GemmaForCausalLM": (hf_families.gemma_weights, hf_families.gemma_forward,
                         lambda c: hf_families.llama_attn_names(c, tied_default=True)),
    "PhiForCausalLM": (hf_families.phi_weights, hf_families.phi_forward, hf_families.phi_attn_names),
}

# the cases whose expected.json also holds attn grad's loss and weight gradients (autograd)
GRAD_CASES = {"gpt_neo_f32", "gpt_neox_f32", "gpt_neox_f64_sequential", "gemma_f32", "phi_f32", "mistral_window_f32"}
LABELS = IDS[1:] + IDS[:1]  # each position's next id (the last wraps around)

CASES += [
    ("mistral_window_f32", MISTRAL_WINDOW, "F32", {}),
    ("mistral_default_window_bf16", MISTRAL_DEFAULT, "BF16", {}),
    ("gpt_neo_f32", GPT_NEO, "F32", {}),
    ("gpt_neo_bf16_local_first", variant(GPT_NEO, num_layers=3, attention_types=[[["local"], 1], [["global", "local"], 1]],
                                         window_size=2, intermediate_size=12), "BF16", {}),
    ("gpt_neo_f16_untied", variant(GPT_NEO, tie_word_embeddings=False, attention_types=[[["local"], 2]]), "F16", {}),
    ("gpt_neox_f32", NEOX, "F32", {}),
    ("gpt_neox_f64_sequential", variant(NEOX, use_parallel_residual=False, rotary_pct=0.5), "F64", {}),
    ("gpt_neox_bf16_full_rotary", variant(NEOX, rotary_pct=1.0, attention_bias=False), "BF16", {}),
    ("gpt_neox_f16_sharded", NEOX, "F16", {"shards": 2}),
    ("gemma_f32", GEMMA, "F32", {}),
    ("gemma_bf16_mha", variant(GEMMA, num_key_value_heads=4, head_dim=4, tie_word_embeddings=False), "BF16", {}),
    ("phi_f32", PHI, "F32", {}),
    ("phi_f16_gqa", variant(PHI, num_key_value_heads=1, partial_rotary_factor=0.25), "F16", {}),
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
    elif arch in FAMILIES:
        weights = FAMILIES[arch][0](config, rng)
    else:
        weights = llama_weights(config, rng, arch)
    exact = write_checkpoint(folder, weights, dtype, options.get("shards", 1))
    write_json(os.path.join(folder, "config.json"), dict(config, torch_dtype="float32"), indent=2)
    if "generation" in options:
        write_json(os.path.join(folder, "generation_config.json"), options["generation"], indent=2)
    ids = torch.tensor(IDS)
    if arch == "GPT2LMHeadModel":
        run = lambda w, t: gpt2_forward(config, w, t, prefix)  # noqa: E731
    elif arch in FAMILIES:
        run = lambda w, t: FAMILIES[arch][1](config, w, t)  # noqa: E731
    else:
        run = lambda w, t: llama_forward(config, w, t, arch)  # noqa: E731
    logits, attentions = run(exact, ids)
    steps = greedy(lambda t: run(exact, t))
    expected = {"ids": IDS, "logits": logits.tolist(), "attention_weights": [a.tolist() for a in attentions],
                "prompt": PROMPT, "greedy": steps}
    if name in GRAD_CASES:
        names = FAMILIES[arch][2](config) if arch in FAMILIES else hf_families.llama_attn_names(config)
        expected["grad"] = hf_families.attn_gradients(run, exact, IDS, LABELS, names)
    note = ""
    if attn and arch not in FAMILIES:
        note = f", attn's own forward within {check_against_attn(attn, folder, attn_model_file(config, exact, arch, prefix), logits, attentions):.1e}"
    write_json(os.path.join(folder, "expected.json"), expected)
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


# ---- issue 34's references against GPT-2's and Llama's, where a family reduces to them ----


def worst_difference(a, b):
    (la, aa), (lb, ab) = a, b
    return max([(la - lb).abs().max().item()] + [(x - y).abs().max().item() for x, y in zip(aa, ab)])


def check_reductions():
    """Each new reference against an older one on the same numbers, where the families meet:
    GPT-Neo with global layers and queries pre-scaled by 1/√d is GPT-2 (Conv1D's (in, out)
    transposed to nn.Linear's (out, in), c_attn's biases zero); GPT-NeoX with full rotary and
    the sequential residual is Llama with LayerNorm and GELU's MLP; Gemma is Llama with the
    gains 1 + w, the embeddings times √N and GeGLU; Phi is GPT-NeoX's parallel layer with one
    norm for both sub-layers and a head bias; masking_utils' sliding window (Mistral's) is
    GPT-Neo's local buffer bias ^ tril(bias, -W). Logits and attention weights within 1e-12."""
    rng = np.random.default_rng(21999)
    T = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float64))  # noqa: E731
    ids = torch.tensor(IDS)
    results = {}
    # GPT-Neo, all global, q_proj = W_q / √d (d = 4: exact), against GPT-2
    g2 = {k: T(v) for k, v in gpt2_weights(GPT2, rng, "", False).items()}
    N, d = GPT2["n_embd"], GPT2["n_embd"] // GPT2["n_head"]
    neo_c = variant(GPT_NEO, attention_types=[[["global"], 2]], hidden_size=N, num_heads=GPT2["n_head"])
    neo = {"transformer.wte.weight": g2["wte.weight"], "transformer.wpe.weight": g2["wpe.weight"],
           "transformer.ln_f.weight": g2["ln_f.weight"], "transformer.ln_f.bias": g2["ln_f.bias"]}
    for i in range(GPT2["n_layer"]):
        a, b = f"h.{i}.", f"transformer.h.{i}."
        g2[a + "attn.c_attn.bias"] = torch.zeros(3 * N)
        qkv = g2[a + "attn.c_attn.weight"]
        neo[b + "attn.attention.q_proj.weight"] = (qkv[:, :N] / math.sqrt(d)).T
        neo[b + "attn.attention.k_proj.weight"], neo[b + "attn.attention.v_proj.weight"] = qkv[:, N:2 * N].T, qkv[:, 2 * N:].T
        neo[b + "attn.attention.out_proj.weight"] = g2[a + "attn.c_proj.weight"].T
        neo[b + "attn.attention.out_proj.bias"] = g2[a + "attn.c_proj.bias"]
        for n in ("ln_1", "ln_2"):
            neo[b + n + ".weight"], neo[b + n + ".bias"] = g2[a + n + ".weight"], g2[a + n + ".bias"]
        for n in ("c_fc", "c_proj"):
            neo[b + f"mlp.{n}.weight"], neo[b + f"mlp.{n}.bias"] = g2[a + f"mlp.{n}.weight"].T, g2[a + f"mlp.{n}.bias"]
    results["GPT-Neo (global, queries / sqrt(d)) vs GPT-2"] = worst_difference(
        hf_families.gpt_neo_forward(neo_c, neo, ids), gpt2_forward(GPT2, g2, ids, ""))
    # GPT-NeoX, rotary_pct 1, sequential, against Llama with LayerNorm and GELU's MLP
    nc = variant(NEOX, rotary_pct=1.0, use_parallel_residual=False)
    nx = {k: T(v) for k, v in hf_families.gpt_neox_weights(nc, rng).items() if v.dtype != bool}
    H, Nn = nc["num_attention_heads"], nc["hidden_size"]
    lc = variant(LLAMA, hidden_size=Nn, num_attention_heads=H, num_key_value_heads=H, attention_bias=True,
                 intermediate_size=nc["intermediate_size"], rope_theta=float(nc["rotary_emb_base"]))
    ll = {"model.embed_tokens.weight": nx["gpt_neox.embed_in.weight"], "lm_head.weight": nx["embed_out.weight"],
          "model.norm.weight": nx["gpt_neox.final_layer_norm.weight"],
          "model.norm.bias": nx["gpt_neox.final_layer_norm.bias"]}
    for i in range(nc["num_hidden_layers"]):
        a, b = f"gpt_neox.layers.{i}.", f"model.layers.{i}."
        qkv, qkv_b = nx[a + "attention.query_key_value.weight"], nx[a + "attention.query_key_value.bias"]
        for k, n in enumerate(("q_proj", "k_proj", "v_proj")):
            ll[b + f"self_attn.{n}.weight"] = qkv.view(H, 3, -1, Nn)[:, k].reshape(-1, Nn)
            ll[b + f"self_attn.{n}.bias"] = qkv_b.view(H, 3, -1)[:, k].reshape(-1)
        ll[b + "self_attn.o_proj.weight"], ll[b + "self_attn.o_proj.bias"] = (nx[a + "attention.dense.weight"],
                                                                            nx[a + "attention.dense.bias"])
        for n, m in (("input_layernorm", "input_layernorm"), ("post_attention_layernorm", "post_attention_layernorm")):
            ll[b + n + ".weight"], ll[b + n + ".bias"] = nx[a + m + ".weight"], nx[a + m + ".bias"]
        for n in ("dense_h_to_4h", "dense_4h_to_h"):
            ll[b + f"mlp.{n}.weight"], ll[b + f"mlp.{n}.bias"] = nx[a + f"mlp.{n}.weight"], nx[a + f"mlp.{n}.bias"]
    ln = lambda h, key: torch.nn.functional.layer_norm(h, (Nn,), ll[key + ".weight"], ll[key + ".bias"], 1e-5)  # noqa
    gelu_mlp = lambda x, L: linear(torch.nn.functional.gelu(linear(x, ll[L + "mlp.dense_h_to_4h.weight"],  # noqa
                                                                   ll[L + "mlp.dense_h_to_4h.bias"])),
                                   ll[L + "mlp.dense_4h_to_h.weight"], ll[L + "mlp.dense_4h_to_h.bias"])
    results["GPT-NeoX (full rotary, sequential) vs Llama (LayerNorm, GELU MLP)"] = worst_difference(
        hf_families.gpt_neox_forward(nc, nx, ids), llama_forward(lc, ll, ids, "LlamaForCausalLM", ln, gelu_mlp))
    # Gemma against Llama: gains 1 + w, embeddings times √N, GeGLU
    gm = {k: T(v) for k, v in hf_families.gemma_weights(GEMMA, rng).items()}
    gc = variant(LLAMA, hidden_size=GEMMA["hidden_size"], num_attention_heads=GEMMA["num_attention_heads"],
                 num_key_value_heads=GEMMA["num_key_value_heads"], head_dim=GEMMA["head_dim"],
                 intermediate_size=GEMMA["intermediate_size"], tie_word_embeddings=True)
    gl = {k: (1.0 + v if k.endswith("norm.weight") else v) for k, v in gm.items()}
    geglu = lambda x, L: linear(torch.nn.functional.gelu(linear(x, gl[L + "mlp.gate_proj.weight"]), approximate="tanh")  # noqa
                                * linear(x, gl[L + "mlp.up_proj.weight"]), gl[L + "mlp.down_proj.weight"])
    scaled = lambda t: gl["model.embed_tokens.weight"][t] * torch.tensor(GEMMA["hidden_size"] ** 0.5)  # noqa: E731
    results["Gemma vs Llama (1 + w, embeddings * sqrt(N), GeGLU)"] = worst_difference(
        hf_families.gemma_forward(GEMMA, gm, ids), llama_forward(gc, gl, ids, "LlamaForCausalLM", mlp=geglu,
                                                                  embed=scaled))
    # Phi against GPT-NeoX's parallel layer: both norms Phi's one, q/k/v fused per head, the head's bias added
    ph = {k: T(v) for k, v in hf_families.phi_weights(PHI, rng).items()}
    Hp, Np = PHI["num_attention_heads"], PHI["hidden_size"]
    pc = variant(NEOX, hidden_size=Np, num_attention_heads=Hp, intermediate_size=PHI["intermediate_size"],
                 hidden_act="gelu_new", rotary_pct=PHI["partial_rotary_factor"], rotary_emb_base=PHI["rope_theta"])
    px = {"gpt_neox.embed_in.weight": ph["model.embed_tokens.weight"], "embed_out.weight": ph["lm_head.weight"],
          "gpt_neox.final_layer_norm.weight": ph["model.final_layernorm.weight"],
          "gpt_neox.final_layer_norm.bias": ph["model.final_layernorm.bias"]}
    for i in range(PHI["num_hidden_layers"]):
        a, b = f"model.layers.{i}.", f"gpt_neox.layers.{i}."
        parts = [ph[a + f"self_attn.{n}_proj.weight"].view(Hp, 1, -1, Np) for n in ("q", "k", "v")]
        px[b + "attention.query_key_value.weight"] = torch.cat(parts, dim=1).reshape(-1, Np)
        parts = [ph[a + f"self_attn.{n}_proj.bias"].view(Hp, 1, -1) for n in ("q", "k", "v")]
        px[b + "attention.query_key_value.bias"] = torch.cat(parts, dim=1).reshape(-1)
        px[b + "attention.dense.weight"], px[b + "attention.dense.bias"] = (ph[a + "self_attn.dense.weight"],
                                                                          ph[a + "self_attn.dense.bias"])
        for n in ("input_layernorm", "post_attention_layernorm"):
            px[b + n + ".weight"], px[b + n + ".bias"] = ph[a + "input_layernorm.weight"], ph[a + "input_layernorm.bias"]
        for n, m in (("dense_h_to_4h", "fc1"), ("dense_4h_to_h", "fc2")):
            px[b + f"mlp.{n}.weight"], px[b + f"mlp.{n}.bias"] = ph[a + f"mlp.{m}.weight"], ph[a + f"mlp.{m}.bias"]
    neox_logits, neox_attentions = hf_families.gpt_neox_forward(pc, px, ids)
    results["Phi vs GPT-NeoX (parallel, one norm, + the head's bias)"] = worst_difference(
        hf_families.phi_forward(PHI, ph, ids), (neox_logits + ph["lm_head.bias"], neox_attentions))
    # the window: masking_utils' kv > q - W (Mistral) against GPT-Neo's local buffer
    for W in range(1, 6):
        bias = torch.tril(torch.ones((8, 8), dtype=torch.uint8))
        local = (bias ^ torch.tril(bias, -W)).bool()
        if not torch.equal(local, additive_mask(8, W) == 0):
            sys.exit(f"the window masks differ for W = {W}")
    results["the sliding window: masking_utils vs GPT-Neo's buffer (W = 1..5)"] = 0.0
    for what, worst in results.items():
        print(f"{what}: worst difference {worst:.1e}")
        if not worst <= 1e-12:
            sys.exit(f"{what}: the references differ by {worst}")


# ---- BERT (hf_bert.py: the forward as modeling_bert.py defines it) ----------------------

BERT_CASES = [
    # save_pretrained's BertForMaskedLM: the tied decoder not stored; with vocab.txt for the CLI
    ("bert_mlm_f32", hf_bert.BERT, "F32", {"prefix": "bert.", "head": True, "vocab": True}),
    # an old BertForPreTraining file: LayerNorm gamma/beta, the pooler, the next-sentence head,
    # the int64 position_ids buffer and the tied decoder stored again
    ("bert_pretraining_legacy_f16", variant(hf_bert.BERT, architectures=["BertForPreTraining"]), "F16",
     {"prefix": "bert.", "head": True, "legacy": True, "extras": True}),
    # BertModel: the encoder alone (no "bert." prefix, a pooler, no head)
    ("bert_model_f64", variant(hf_bert.BERT, architectures=["BertModel"]), "F64", {"prefix": "", "head": False}),
    ("bert_mlm_untied_bf16", variant(hf_bert.BERT, tie_word_embeddings=False, hidden_act="gelu_new"), "BF16",
     {"prefix": "bert.", "head": True}),
]
BATCH = [hf_bert.IDS, [2, 12, 11, 14, 10, 3, 0, 0, 0]]  # "a dog ran ." padded with [PAD] (id 0)


def check_bert_ids():
    """hf_bert.py's ids are @lenml/tokenizers' for its texts (tokenizers/bert_tiny.json,
    make_bert_tiny_ids.mjs), not ours."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers", "bert_tiny.json")) as f:
        ids = {c["text"]: c["ids"] for c in json.load(f)["cases"]}
    assert ids["The cat sat on the [MASK]."] == hf_bert.IDS
    assert ids["The cat sat on the mat."] == hf_bert.LABELS
    assert ids["A dog ran."] + [0] * 3 == BATCH[1]


def make_bert_case(name, config, dtype, o, seed):
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    prefix, head, legacy = o["prefix"], o["head"], o.get("legacy", False)
    weights = hf_bert.bert_weights(config, np.random.default_rng(seed), prefix, head, legacy, o.get("extras", False))
    if o.get("extras"):
        weights[prefix + "embeddings.position_ids"] = np.arange(config["max_position_embeddings"],
                                                                dtype=np.int64)[None]
    exact = write_checkpoint(folder, weights, dtype)
    write_json(os.path.join(folder, "config.json"), dict(config, torch_dtype="float32"), indent=2)
    out, attentions = hf_bert.bert_forward(config, exact, torch.tensor([hf_bert.IDS]), prefix, head, legacy)
    expected = {"ids": hf_bert.IDS, "logits" if head else "hidden": out[0].tolist(),
                "attention_weights": [a[0].tolist() for a in attentions]}
    if head:
        expected["labels"] = hf_bert.LABELS
        expected["gradients"] = hf_bert.bert_gradients(config, exact, prefix, legacy)
        top = torch.topk(torch.softmax(out[0][hf_bert.MASK_POSITION], -1), 3)
        expected["mask_top3"] = {"ids": top.indices.tolist(), "p": top.values.tolist()}
        # attn's --ablate 1.0 (layer 1's head 0 zeroed) is BertModel's head_mask with that head 0
        head_mask = torch.ones(config["num_hidden_layers"], config["num_attention_heads"])
        head_mask[1, 0] = 0
        ablated, _ = hf_bert.bert_forward(config, exact, torch.tensor([hf_bert.IDS]), prefix, head, legacy,
                                          head_mask=head_mask)
        expected["ablated_1_0_logits"] = ablated[0].tolist()
    if o.get("vocab"):
        with open(os.path.join(folder, "vocab.txt"), "w") as f:
            f.write("\n".join(hf_bert.VOCAB) + "\n")
        write_json(os.path.join(folder, "tokenizer_config.json"), {"do_lower_case": True}, indent=2)
        mask = torch.tensor([[1] * 9, [1] * 6 + [0] * 3])
        batch, weights_b = hf_bert.bert_forward(config, exact, torch.tensor(BATCH), prefix, head, legacy, mask)
        expected["batch"] = {"ids": BATCH, "attention_mask": mask.tolist(), "logits": batch.tolist(),
                             "attention_weights": [a.tolist() for a in weights_b]}
    write_json(os.path.join(folder, "expected.json"), expected)
    agreement = hf_bert.check_layers_against_torch_nn(config, exact, prefix, legacy)
    print(f"{name}: {sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))} bytes, "
          f"its encoder within {agreement:.1e} of torch.nn.TransformerEncoderLayer")


# pytorch_model.bin versions of two BERT cases (hf_checkpoints_bin.py's formats), each with
# its tied tensors stored once under two names, as BertForMaskedLM.state_dict() gives them:
# cls.predictions.decoder.weight is the word embeddings' tensor, decoder.bias is
# cls.predictions.bias. bert_bin_cases.txt lists "BIN_CASE SAFETENSORS_CASE".
BERT_BIN_CASES = [("bert_mlm_f32_bin", "bert_mlm_f32", "zip"),
                  ("bert_pretraining_legacy_f16_bin_legacy", "bert_pretraining_legacy_f16", "legacy")]


def make_bert_bin_cases():
    hf_checkpoints_bin.NUMPY_DTYPES.setdefault("I64", "<i8")  # the position_ids buffer
    lines = []
    for name, source, fmt in BERT_BIN_CASES:
        folder, origin = os.path.join(OUT, name), os.path.join(OUT, source)
        os.makedirs(folder)
        shutil.copy(os.path.join(origin, "config.json"), folder)
        sd = hf_checkpoints_bin.read_case(origin)
        sd["cls.predictions.decoder.weight"] = sd["bert.embeddings.word_embeddings.weight"]
        sd["cls.predictions.decoder.bias"] = sd["cls.predictions.bias"]
        hf_checkpoints_bin.save(sd, os.path.join(folder, "pytorch_model.bin"), fmt)
        loaded = torch.load(os.path.join(folder, "pytorch_model.bin"))
        assert all(torch.equal(loaded[k], t) for k, t in sd.items()), name
        assert loaded["cls.predictions.decoder.weight"].data_ptr() == \
            loaded["bert.embeddings.word_embeddings.weight"].data_ptr(), name
        lines.append(f"{name} {source}")
        print(f"{name}: {fmt}, from {source}")
    with open(os.path.join(OUT, "bert_bin_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


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
    check_reductions()
    for k, (name, config, dtype, options) in enumerate(CASES):
        make_case(name, config, dtype, options, 22000 + k, args.attn)
    write_case_list(OUT, [c[0] for c in CASES])  # the placeholder-token cases
    make_tokenizer_case(22016)  # its seed since it came after the first 16 cases
    check_bert_ids()
    for k, (name, config, dtype, options) in enumerate(BERT_CASES):
        make_bert_case(name, config, dtype, options, 23000 + k)
    with open(os.path.join(OUT, "bert_cases.txt"), "w") as f:
        f.write("\n".join(c[0] for c in BERT_CASES) + "\n")
    make_bin_cases(OUT)  # pytorch_model.bin versions of some cases (hf_checkpoints_bin.py)
    make_bert_bin_cases()


if __name__ == "__main__":
    main()
