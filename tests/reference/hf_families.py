"""The float64 references of issue 34's decoder families, for make_hf_checkpoints.py.

Each forward follows its transformers modeling file step by step (read on
huggingface/transformers; transformers is not installed here, so they are written in torch):
- GPT-Neo, models/gpt_neo/modeling_gpt_neo.py: GPTNeoSelfAttention (q, k, v without bias,
  q · kᵀ unscaled, the `bias` buffer tril(ones(P, P)), a local layer's
  `bias ^ tril(bias, -window_size)`, torch.where against the mask value), GPTNeoMLP (c_fc,
  ACT2FN[activation_function], c_proj, nn.Linear), GPTNeoBlock, GPTNeoConfig's
  expand_attention_types_params; wte + wpe, ln_f, the head tied to wte.
- GPT-NeoX, models/gpt_neox/modular_gpt_neox.py: query_key_value viewed (B, S, H, 3d) and
  chunked into q, k, v per head; apply_rotary_pos_emb on the first rotary_ndims =
  int(head_size * rotary_pct) numbers (the rotary embedding's inv_freq over that dim,
  rotary_emb_base); eager attention scaled by head_size**-0.5; GPTNeoXLayer with
  use_parallel_residual (mlp_output + attn_output + hidden_states) or without
  (attn_output + hidden_states, then mlp_output + attn_output); final_layer_norm; embed_out.
- Gemma, models/gemma/modular_gemma.py: embeddings times torch.tensor(hidden_size**0.5),
  GemmaRMSNorm (x * rsqrt(mean(x²) + eps), times 1.0 + weight), LlamaAttention with head_dim
  and num_key_value_heads, GemmaMLP (down(gelu_pytorch_tanh(gate(x)) * up(x))), the tied head.
- Phi, models/phi/modular_phi.py: PhiDecoderLayer (one input_layernorm;
  attn_outputs + feed_forward_hidden_states + residual), PhiAttention (biased q/k/v and
  dense; rotary on the first int(head_dim * partial_rotary_factor) numbers), PhiMLP (fc1,
  gelu_new, fc2), final_layernorm, lm_head with its bias.
As make_hf_checkpoints.py's own, float64 throughout (GPT-Neo upcasts q and k to float32 and
Hugging Face computes RMSNorm and the RoPE angles in float32; here nothing is rounded to
float32: the architecture's definition evaluated exactly, as attn does).

Each family also gives its weights' gradients in attn's layout and names (attn_gradients):
the C++ test holds attn grad to torch's autograd through them.
"""
import math

import numpy as np
import torch

F = torch.nn.functional


def gelu_new(x):  # NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def activation(name):  # ACT2FN
    return {"gelu_new": gelu_new, "gelu": F.gelu, "relu": F.relu,
            "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}[name]


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary(dim, base, S):
    """_compute_default_rope_parameters over `dim` numbers, then cos and sin of cat(freqs, freqs)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))
    freqs = torch.outer(torch.arange(S).double(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[None, None], emb.sin()[None, None]


def partial_rotary(q, k, cos, sin):  # apply_rotary_pos_emb on the first rotary_dim numbers
    r = cos.shape[-1]
    q_rot, q_pass, k_rot, k_pass = q[..., :r], q[..., r:], k[..., :r], k[..., r:]
    q_embed = (q_rot * cos) + (rotate_half(q_rot) * sin)
    k_embed = (k_rot * cos) + (rotate_half(k_rot) * sin)
    return torch.cat([q_embed, q_pass], dim=-1), torch.cat([k_embed, k_pass], dim=-1)


def causal_min_mask(S):  # create_causal_mask for eager attention: 0 where seen, min where not
    return torch.triu(torch.full((S, S), torch.finfo(torch.float64).min), diagonal=1)


def layer_norm(x, w, key, eps):
    return F.layer_norm(x, (x.shape[-1],), w[key + ".weight"], w[key + ".bias"], eps)


def r(rng, *shape, s=0.5):
    return rng.standard_normal(shape) * s


# ---- GPT-Neo ------------------------------------------------------------------------------


def expand_attention_types(types):  # GPTNeoConfig.expand_attention_types_params
    out = []
    for item in types:
        for _ in range(item[1]):
            out.extend(item[0])
    return out


def gpt_neo_forward(c, w, ids):
    """GPTNeoForCausalLM's logits (S, V) and attention weights."""
    p = "transformer."
    N, H, eps = c["hidden_size"], c["num_heads"], c.get("layer_norm_epsilon", 1e-5)
    d, S, P = N // H, len(ids), c["max_position_embeddings"]
    layers = expand_attention_types(c["attention_types"])
    act = activation(c.get("activation_function", "gelu_new"))
    h = (w[p + "wte.weight"][ids] + w[p + "wpe.weight"][torch.arange(S)])[None]
    attentions = []
    for i in range(c["num_layers"]):
        L = f"{p}h.{i}."
        bias = torch.tril(torch.ones((P, P), dtype=torch.uint8)).view(1, 1, P, P)
        if layers[i] == "local":
            bias = bias ^ torch.tril(bias, -c["window_size"])
        residual = h
        x = layer_norm(h, w, L + "ln_1", eps)
        q, k, v = (F.linear(x, w[L + f"attn.attention.{n}_proj.weight"]).view(1, S, H, d).permute(0, 2, 1, 3)
                   for n in ("q", "k", "v"))
        a = torch.matmul(q, k.transpose(-1, -2))
        causal = bias[:, :, S - S:S, :S].bool()
        a = torch.where(causal, a, torch.tensor(torch.finfo(a.dtype).min))
        a = F.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).permute(0, 2, 1, 3).reshape(1, S, N)
        o = F.linear(o, w[L + "attn.attention.out_proj.weight"], w[L + "attn.attention.out_proj.bias"])
        h = o + residual
        residual = h
        x = layer_norm(h, w, L + "ln_2", eps)
        m = F.linear(act(F.linear(x, w[L + "mlp.c_fc.weight"], w[L + "mlp.c_fc.bias"])), w[L + "mlp.c_proj.weight"],
                     w[L + "mlp.c_proj.bias"])
        h = residual + m
    h = layer_norm(h, w, p + "ln_f", eps)
    head = w[p + "wte.weight"] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return (h @ head.T)[0], attentions


def gpt_neo_weights(c, rng):
    p = "transformer."
    N, V, P = c["hidden_size"], c["vocab_size"], c["max_position_embeddings"]
    Fw = c.get("intermediate_size") or 4 * N
    w = {p + "wte.weight": r(rng, V, N), p + "wpe.weight": r(rng, P, N, s=0.3)}
    for i in range(c["num_layers"]):
        L = f"{p}h.{i}."
        w[L + "ln_1.weight"], w[L + "ln_1.bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
        layers = expand_attention_types(c["attention_types"])
        bias = np.tril(np.ones((P, P), dtype=np.uint8))
        if layers[i] == "local":
            bias = bias ^ np.tril(bias, -c["window_size"])
        w[L + "attn.attention.bias"] = bias.astype(bool)[None, None]  # buffers, as the old files keep them
        w[L + "attn.attention.masked_bias"] = np.array(-1e9)
        for n in ("q", "k", "v"):
            w[L + f"attn.attention.{n}_proj.weight"] = r(rng, N, N)
        w[L + "attn.attention.out_proj.weight"], w[L + "attn.attention.out_proj.bias"] = r(rng, N, N), r(rng, N, s=0.1)
        w[L + "ln_2.weight"], w[L + "ln_2.bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
        w[L + "mlp.c_fc.weight"], w[L + "mlp.c_fc.bias"] = r(rng, Fw, N), r(rng, Fw, s=0.1)
        w[L + "mlp.c_proj.weight"], w[L + "mlp.c_proj.bias"] = r(rng, N, Fw), r(rng, N, s=0.1)
    w[p + "ln_f.weight"], w[p + "ln_f.bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
    if not c.get("tie_word_embeddings", True):
        w["lm_head.weight"] = r(rng, V, N)
    return w


def gpt_neo_attn_names(c):
    """attn's parameter -> (checkpoint tensor, how): the gradient's layout in attn."""
    p = "transformer."
    out = {"embedding": (p + "wte.weight", None), "positions": (p + "wpe.weight", None)}
    for i in range(c["num_layers"]):
        L, a = f"{p}h.{i}.", f"decoder.{i}."
        for n, m in (("W_q", "q_proj"), ("W_k", "k_proj"), ("W_v", "v_proj"), ("W_o", "out_proj")):
            out[a + "self_attention." + n] = (L + f"attn.attention.{m}.weight", "T")
        out[a + "self_attention.b_o"] = (L + "attn.attention.out_proj.bias", None)
        for k, n in ((1, "ln_1"), (2, "ln_2")):
            out[a + f"norm{k}.gamma"], out[a + f"norm{k}.beta"] = (L + n + ".weight", None), (L + n + ".bias", None)
        out[a + "ffn.W_1"], out[a + "ffn.b_1"] = (L + "mlp.c_fc.weight", "T"), (L + "mlp.c_fc.bias", None)
        out[a + "ffn.W_2"], out[a + "ffn.b_2"] = (L + "mlp.c_proj.weight", "T"), (L + "mlp.c_proj.bias", None)
    out["decoder_norm.gamma"], out["decoder_norm.beta"] = (p + "ln_f.weight", None), (p + "ln_f.bias", None)
    if not c.get("tie_word_embeddings", True):
        out["output.W"] = ("lm_head.weight", "T")
    return out


# ---- GPT-NeoX -----------------------------------------------------------------------------


def gpt_neox_forward(c, w, ids):
    N, H, eps = c["hidden_size"], c["num_attention_heads"], c.get("layer_norm_eps", 1e-5)
    d, S = N // H, len(ids)
    rotary_ndims = int(d * c.get("rotary_pct", 0.25))
    cos, sin = rotary(rotary_ndims, c.get("rotary_emb_base", 10000), S)
    mask = causal_min_mask(S)
    act = activation(c.get("hidden_act", "gelu"))
    bias = c.get("attention_bias", True)
    h = w["gpt_neox.embed_in.weight"][ids][None]
    attentions = []

    def mlp(x, L):
        return F.linear(act(F.linear(x, w[L + "mlp.dense_h_to_4h.weight"], w[L + "mlp.dense_h_to_4h.bias"])),
                        w[L + "mlp.dense_4h_to_h.weight"], w[L + "mlp.dense_4h_to_h.bias"])

    for i in range(c["num_hidden_layers"]):
        L = f"gpt_neox.layers.{i}."
        x = layer_norm(h, w, L + "input_layernorm", eps)
        qkv = F.linear(x, w[L + "attention.query_key_value.weight"],
                       w[L + "attention.query_key_value.bias"] if bias else None)
        qkv = qkv.view(1, S, -1, 3 * d).transpose(1, 2)
        q, k, v = qkv.chunk(3, dim=-1)
        q, k = partial_rotary(q, k, cos, sin)
        a = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + mask
        a = F.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, S, -1)
        attn_output = F.linear(o, w[L + "attention.dense.weight"], w[L + "attention.dense.bias"] if bias else None)
        if c.get("use_parallel_residual", True):
            mlp_output = mlp(layer_norm(h, w, L + "post_attention_layernorm", eps), L)
            h = mlp_output + attn_output + h
        else:
            attn_output = attn_output + h
            mlp_output = mlp(layer_norm(attn_output, w, L + "post_attention_layernorm", eps), L)
            h = mlp_output + attn_output
    h = layer_norm(h, w, "gpt_neox.final_layer_norm", eps)
    head = w["gpt_neox.embed_in.weight"] if c.get("tie_word_embeddings", False) else w["embed_out.weight"]
    return (h @ head.T)[0], attentions


def gpt_neox_weights(c, rng):
    N, V, Fw = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    H = c["num_attention_heads"]
    d = N // H
    w = {"gpt_neox.embed_in.weight": r(rng, V, N)}
    for i in range(c["num_hidden_layers"]):
        L = f"gpt_neox.layers.{i}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            w[L + n + ".weight"], w[L + n + ".bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
        P = c["max_position_embeddings"]
        w[L + "attention.bias"] = np.tril(np.ones((P, P), dtype=bool))[None, None]  # buffers
        w[L + "attention.masked_bias"] = np.array(-1e9)
        rot = int(d * c.get("rotary_pct", 0.25))
        w[L + "attention.rotary_emb.inv_freq"] = 1.0 / (c.get("rotary_emb_base", 10000) ** (np.arange(0, rot, 2) / rot))
        w[L + "attention.query_key_value.weight"] = r(rng, 3 * N, N)
        w[L + "attention.dense.weight"] = r(rng, N, N)
        if c.get("attention_bias", True):
            w[L + "attention.query_key_value.bias"] = r(rng, 3 * N, s=0.2)
            w[L + "attention.dense.bias"] = r(rng, N, s=0.1)
        w[L + "mlp.dense_h_to_4h.weight"], w[L + "mlp.dense_h_to_4h.bias"] = r(rng, Fw, N), r(rng, Fw, s=0.1)
        w[L + "mlp.dense_4h_to_h.weight"], w[L + "mlp.dense_4h_to_h.bias"] = r(rng, N, Fw), r(rng, N, s=0.1)
    w["gpt_neox.final_layer_norm.weight"] = 1 + r(rng, N, s=0.2)
    w["gpt_neox.final_layer_norm.bias"] = r(rng, N, s=0.1)
    if not c.get("tie_word_embeddings", False):
        w["embed_out.weight"] = r(rng, V, N)
    return w


def gpt_neox_attn_names(c):
    H = c["num_attention_heads"]
    out = {"embedding": ("gpt_neox.embed_in.weight", None)}
    for i in range(c["num_hidden_layers"]):
        L, a = f"gpt_neox.layers.{i}.", f"decoder.{i}."
        for k, (n, b) in enumerate((("W_q", "b_q"), ("W_k", "b_k"), ("W_v", "b_v"))):
            out[a + "self_attention." + n] = (L + "attention.query_key_value.weight", ("head_rows", H, k))
            if c.get("attention_bias", True):
                out[a + "self_attention." + b] = (L + "attention.query_key_value.bias", ("head_rows", H, k))
        out[a + "self_attention.W_o"] = (L + "attention.dense.weight", "T")
        if c.get("attention_bias", True):
            out[a + "self_attention.b_o"] = (L + "attention.dense.bias", None)
        for k, n in ((1, "input_layernorm"), (2, "post_attention_layernorm")):
            out[a + f"norm{k}.gamma"], out[a + f"norm{k}.beta"] = (L + n + ".weight", None), (L + n + ".bias", None)
        out[a + "ffn.W_1"], out[a + "ffn.b_1"] = (L + "mlp.dense_h_to_4h.weight", "T"), (L + "mlp.dense_h_to_4h.bias", None)
        out[a + "ffn.W_2"], out[a + "ffn.b_2"] = (L + "mlp.dense_4h_to_h.weight", "T"), (L + "mlp.dense_4h_to_h.bias", None)
    out["decoder_norm.gamma"] = ("gpt_neox.final_layer_norm.weight", None)
    out["decoder_norm.beta"] = ("gpt_neox.final_layer_norm.bias", None)
    if not c.get("tie_word_embeddings", False):
        out["output.W"] = ("embed_out.weight", "T")
    return out


# ---- Gemma --------------------------------------------------------------------------------


def gemma_rms_norm(x, weight, eps):  # GemmaRMSNorm
    output = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return output * (1.0 + weight)


def gemma_forward(c, w, ids):
    N, H = c["hidden_size"], c["num_attention_heads"]
    G, d = c.get("num_key_value_heads", 16), c.get("head_dim", 256)
    eps, S = c.get("rms_norm_eps", 1e-6), len(ids)
    cos, sin = rotary(d, c.get("rope_theta", 10000.0), S)
    mask = causal_min_mask(S)
    act = activation(c.get("hidden_activation") or "gelu_pytorch_tanh")
    h = w["model.embed_tokens.weight"][ids][None]
    normalizer = torch.tensor(N ** 0.5, dtype=h.dtype)
    h = h * normalizer
    attentions = []
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        residual = h
        x = gemma_rms_norm(h, w[L + "input_layernorm.weight"], eps)
        q = F.linear(x, w[L + "self_attn.q_proj.weight"]).view(1, S, -1, d).transpose(1, 2)
        k = F.linear(x, w[L + "self_attn.k_proj.weight"]).view(1, S, -1, d).transpose(1, 2)
        v = F.linear(x, w[L + "self_attn.v_proj.weight"]).view(1, S, -1, d).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = (t[:, :, None].expand(1, G, H // G, S, d).reshape(1, H, S, d) for t in (k, v))  # repeat_kv
        a = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + mask
        a = F.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, S, -1)
        h = residual + F.linear(o, w[L + "self_attn.o_proj.weight"])
        residual = h
        x = gemma_rms_norm(h, w[L + "post_attention_layernorm.weight"], eps)
        g = act(F.linear(x, w[L + "mlp.gate_proj.weight"])) * F.linear(x, w[L + "mlp.up_proj.weight"])
        h = residual + F.linear(g, w[L + "mlp.down_proj.weight"])
    h = gemma_rms_norm(h, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return (h @ head.T)[0], attentions


def gemma_weights(c, rng):
    N, Fw, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    H, G, d = c["num_attention_heads"], c.get("num_key_value_heads", 16), c.get("head_dim", 256)
    w = {"model.embed_tokens.weight": r(rng, V, N, s=0.3)}
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        w[L + "input_layernorm.weight"] = r(rng, N, s=0.3)  # the gain's distance from 1
        for name, rows in (("q_proj", H * d), ("k_proj", G * d), ("v_proj", G * d)):
            w[L + f"self_attn.{name}.weight"] = r(rng, rows, N)
        w[L + "self_attn.o_proj.weight"] = r(rng, N, H * d)
        w[L + "post_attention_layernorm.weight"] = r(rng, N, s=0.3)
        w[L + "mlp.gate_proj.weight"], w[L + "mlp.up_proj.weight"] = r(rng, Fw, N), r(rng, Fw, N)
        w[L + "mlp.down_proj.weight"] = r(rng, N, Fw)
    w["model.norm.weight"] = r(rng, N, s=0.3)
    if not c.get("tie_word_embeddings", True):
        w["lm_head.weight"] = r(rng, V, N)
    return w


def llama_attn_names(c, layers_key="num_hidden_layers", tied_default=False):
    """Llama's names (Gemma's, Mistral's) in attn's layout."""
    out = {"embedding": ("model.embed_tokens.weight", None)}
    for i in range(c[layers_key]):
        L, a = f"model.layers.{i}.", f"decoder.{i}."
        for n, m in (("W_q", "q_proj"), ("W_k", "k_proj"), ("W_v", "v_proj"), ("W_o", "o_proj")):
            out[a + "self_attention." + n] = (L + f"self_attn.{m}.weight", "T")
        out[a + "norm1.gamma"] = (L + "input_layernorm.weight", None)
        out[a + "norm2.gamma"] = (L + "post_attention_layernorm.weight", None)
        out[a + "ffn.W_1"], out[a + "ffn.W_3"] = (L + "mlp.gate_proj.weight", "T"), (L + "mlp.up_proj.weight", "T")
        out[a + "ffn.W_2"] = (L + "mlp.down_proj.weight", "T")
    out["decoder_norm.gamma"] = ("model.norm.weight", None)
    if not c.get("tie_word_embeddings", tied_default):
        out["output.W"] = ("lm_head.weight", "T")
    return out


# ---- Phi ----------------------------------------------------------------------------------


def phi_forward(c, w, ids):
    N, H, eps = c["hidden_size"], c["num_attention_heads"], c.get("layer_norm_eps", 1e-5)
    G = c.get("num_key_value_heads") or H
    d, S = N // H, len(ids)
    rotary_ndims = int(d * c.get("partial_rotary_factor", 0.5))
    cos, sin = rotary(rotary_ndims, c.get("rope_theta", 10000.0), S)
    mask = causal_min_mask(S)
    act = activation(c.get("hidden_act", "gelu_new"))
    h = w["model.embed_tokens.weight"][ids][None]
    attentions = []
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        residual = h
        x = layer_norm(h, w, L + "input_layernorm", eps)
        proj = lambda n: F.linear(x, w[L + f"self_attn.{n}.weight"], w[L + f"self_attn.{n}.bias"])  # noqa: E731
        q = proj("q_proj").view(1, S, -1, d).transpose(1, 2)
        k = proj("k_proj").view(1, S, -1, d).transpose(1, 2)
        v = proj("v_proj").view(1, S, -1, d).transpose(1, 2)
        q, k = partial_rotary(q, k, cos, sin)
        k, v = (t[:, :, None].expand(1, G, H // G, S, d).reshape(1, H, S, d) for t in (k, v))  # repeat_kv
        a = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + mask
        a = F.softmax(a, dim=-1)
        attentions.append(a[0])
        o = torch.matmul(a, v).transpose(1, 2).reshape(1, S, -1)
        attn_outputs = F.linear(o, w[L + "self_attn.dense.weight"], w[L + "self_attn.dense.bias"])
        ff = F.linear(act(F.linear(x, w[L + "mlp.fc1.weight"], w[L + "mlp.fc1.bias"])), w[L + "mlp.fc2.weight"],
                      w[L + "mlp.fc2.bias"])
        h = attn_outputs + ff + residual
    h = layer_norm(h, w, "model.final_layernorm", eps)
    return F.linear(h, w["lm_head.weight"], w["lm_head.bias"])[0], attentions


def phi_weights(c, rng):
    N, Fw, V, H = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_attention_heads"]
    G = c.get("num_key_value_heads") or H
    d = N // H
    w = {"model.embed_tokens.weight": r(rng, V, N)}
    for i in range(c["num_hidden_layers"]):
        L = f"model.layers.{i}."
        w[L + "input_layernorm.weight"], w[L + "input_layernorm.bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
        for name, rows in (("q_proj", H * d), ("k_proj", G * d), ("v_proj", G * d), ("dense", N)):
            w[L + f"self_attn.{name}.weight"] = r(rng, rows, H * d if name == "dense" else N)
            w[L + f"self_attn.{name}.bias"] = r(rng, rows, s=0.2)
        w[L + "mlp.fc1.weight"], w[L + "mlp.fc1.bias"] = r(rng, Fw, N), r(rng, Fw, s=0.1)
        w[L + "mlp.fc2.weight"], w[L + "mlp.fc2.bias"] = r(rng, N, Fw), r(rng, N, s=0.1)
    w["model.final_layernorm.weight"], w["model.final_layernorm.bias"] = 1 + r(rng, N, s=0.2), r(rng, N, s=0.1)
    w["lm_head.weight"], w["lm_head.bias"] = r(rng, V, N), r(rng, V, s=0.3)
    return w


def phi_attn_names(c):
    out = {"embedding": ("model.embed_tokens.weight", None)}
    for i in range(c["num_hidden_layers"]):
        L, a = f"model.layers.{i}.", f"decoder.{i}."
        for n, b, m in (("W_q", "b_q", "q_proj"), ("W_k", "b_k", "k_proj"), ("W_v", "b_v", "v_proj"),
                        ("W_o", "b_o", "dense")):
            out[a + "self_attention." + n] = (L + f"self_attn.{m}.weight", "T")
            out[a + "self_attention." + b] = (L + f"self_attn.{m}.bias", None)
        out[a + "norm1.gamma"], out[a + "norm1.beta"] = (L + "input_layernorm.weight", None), (
            L + "input_layernorm.bias", None)
        out[a + "ffn.W_1"], out[a + "ffn.b_1"] = (L + "mlp.fc1.weight", "T"), (L + "mlp.fc1.bias", None)
        out[a + "ffn.W_2"], out[a + "ffn.b_2"] = (L + "mlp.fc2.weight", "T"), (L + "mlp.fc2.bias", None)
    out["decoder_norm.gamma"] = ("model.final_layernorm.weight", None)
    out["decoder_norm.beta"] = ("model.final_layernorm.bias", None)
    out["output.W"], out["output.b"] = ("lm_head.weight", "T"), ("lm_head.bias", None)
    return out


# ---- the gradients, in attn's layout ------------------------------------------------------


def in_attn_layout(g, how):
    """A checkpoint tensor's gradient as attn holds that weight's (X @ W layout)."""
    if how is None:
        return g
    if how == "T":
        return g.T
    _, H, k = how  # query_key_value's rows (or bias) of part k of each head, side by side
    if g.dim() == 1:
        return g.view(H, 3, -1)[:, k].reshape(-1)
    return g.view(H, 3, -1, g.shape[-1])[:, k].reshape(-1, g.shape[-1]).T


def attn_gradients(forward, exact, ids, labels, names):
    """The mean cross-entropy of `labels` over every position, as attn grad computes it, and
    every weight's gradient by torch's autograd, under attn's names in attn's layout."""
    leaves = {k: v.clone().requires_grad_(True) for k, v in exact.items() if v.is_floating_point()}
    logits, _ = forward(leaves, torch.tensor(ids))
    loss = F.cross_entropy(logits, torch.tensor(labels))
    loss.backward()
    grads = {}
    for name, (tensor, how) in names.items():
        g = in_attn_layout(leaves[tensor].grad, how)
        grads[name] = {"shape": list(g.shape), "data": g.reshape(-1).tolist()}
    return {"labels": labels, "loss": loss.item(), "weights": grads}
