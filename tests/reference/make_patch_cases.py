# Reference values for the experiments' tests (tests/interp/experiments_test.cpp), made once
# with Debian's NumPy in float64 from the models' own files:
#   /usr/bin/python3 tests/reference/make_patch_cases.py > tests/reference/patch_cases.json
#
# Three models, each's forward pass written out here from its definition, with the sites of
# docs/experiments.md as places where a value can be read or replaced:
#   - data/examples/trained_induction.json, attn's own model file (docs/model-file.md): the
#     embeddings times sqrt(d_model), RoPE (pairs (i, i + d/2)), causal softmax attention, W_o,
#     post-norm residual LayerNorms, a ReLU feed-forward, the tied head (make_ablation_cases.py's
#     definitions);
#   - tests/reference/hf_checkpoints/gpt2_f32 (GPT2LMHeadModel as modeling_gpt2.py: learned
#     positions, pre-norm LayerNorm blocks, Conv1D x @ W + b, gelu_new, ln_f, tied head) and
#     gpt2_f32_untied (its own lm_head);
#   - tests/reference/hf_checkpoints/llama_f32 (LlamaForCausalLM as modeling_llama.py: RMSNorm,
#     rotate_half RoPE, 4 query heads sharing 2 key/value heads, SwiGLU, untied head).
# The safetensors files are read by hand (F32 widened to float64).
#
# The sites: resid_pre (l, p), the input of layer l at position p; attn_out (l, p), the
# attention's output after W_o and its bias; mlp_out (l, p), the feed-forward's output;
# head (l, h), head h's context (S, d) at every position. A patched run is the corrupted ids
# with that one value replaced by the clean run's, every later step recomputed. The metric is
# logit(answer) - logit(wrong) at the last position. Direct logit attribution: the final
# residual's last row as embed + per layer (each head's context row @ its rows of W_o, W_o's
# bias, the feed-forward's output), each component c projected as
# ((c - mean c) / sigma * gamma) . u (RMSNorm: c / rms * gamma . u) with sigma (rms) the whole
# residual's, u = W_U[answer] - W_U[wrong]; plus beta . u and the output bias's difference.
import json
import math
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CHECKPOINTS = os.path.join(HERE, "hf_checkpoints")


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rms_norm(x, gamma, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gamma


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def causal(S):
    return np.triu(np.full((S, S), -np.inf), k=1)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        assert info["dtype"] == "F32"
        out[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return out


class Hooks:
    """Where a run reads (record) or replaces (patch) the sites' values."""

    def __init__(self, patches=None):
        self.patches = patches or {}  # (kind, layer) -> [(index, value)]
        self.seen = {}

    def at(self, kind, layer, value):
        value = value.copy()
        for index, clean in self.patches.get((kind, layer), []):
            value[index] = clean[index]  # a position's row, or a head's (S, d)
        self.seen[(kind, layer)] = value
        return value


# ---- the induction model (attn's model file) -----------------------------------------------


def rope_pairs(x, theta):  # x (H,S,d): pairs (i, i + d/2) turned by position * theta^(-2i/d)
    H, S, d = x.shape
    half = d // 2
    angle = np.arange(S)[:, None] * (1.0 / theta ** (np.arange(half) * 2 / d))[None, :]
    c, s = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def induction_model():
    m = json.load(open(os.path.join(ROOT, "data", "examples", "trained_induction.json")))
    arr = lambda v: np.array(v, dtype=np.float64)  # noqa: E731
    layers = []
    for layer in m["decoder"]:
        layers.append({k: {kk: arr(vv) for kk, vv in v.items()} for k, v in layer.items()})
    return {"config": m["model"], "vocab": m["vocab"], "E": arr(m["embedding"]), "layers": layers}


def induction_run(model, ids, hooks):
    cfg = model["config"]
    N, H, theta, eps = cfg["d_model"], cfg["num_heads"], cfg["rope_theta"], cfg["layer_norm_eps"]
    d, S, E = N // H, len(ids), model["E"]
    x = E[ids] * np.sqrt(N)
    outputs = []
    for l, layer in enumerate(model["layers"]):
        x = hooks.at("resid_pre", l, x)
        w = layer["self_attention"]
        heads = lambda m: m.reshape(S, H, d).transpose(1, 0, 2)  # noqa: E731
        q, k, v = rope_pairs(heads(x @ w["W_q"]), theta), rope_pairs(heads(x @ w["W_k"]), theta), heads(x @ w["W_v"])
        context = hooks.at("head", l, softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d) + causal(S)) @ v)
        o = hooks.at("attn_out", l, context.transpose(1, 0, 2).reshape(S, N) @ w["W_o"])
        x = layer_norm(x + o, layer["norm1"]["gamma"], layer["norm1"]["beta"], eps)
        f = hooks.at("mlp_out", l, np.maximum(x @ layer["ffn"]["W_1"], 0) @ layer["ffn"]["W_2"])
        x = layer_norm(x + f, layer["norm2"]["gamma"], layer["norm2"]["beta"], eps)
        outputs.append(x)
    return x @ E.T, [o @ E.T for o in outputs]  # the logits, and the lens's (no final norm)


# ---- GPT-2 and Llama (Hugging Face checkpoints) ----------------------------------------------


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gpt2_model(name):
    w = read_safetensors(os.path.join(CHECKPOINTS, name, "model.safetensors"))
    w = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in w.items()}
    c = json.load(open(os.path.join(CHECKPOINTS, name, "config.json")))
    return {"config": c, "w": w, "kind": "gpt2"}


def gpt2_run(model, ids, hooks):
    c, w = model["config"], model["w"]
    N, H, eps = c["n_embd"], c["n_head"], c["layer_norm_epsilon"]
    d, S = N // H, len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:S]
    parts = {"embed": x.copy(), "layers": []}
    for l in range(c["n_layer"]):
        p = f"h.{l}."
        x = hooks.at("resid_pre", l, x)
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[:, i * N:(i + 1) * N].reshape(S, H, d).transpose(1, 0, 2) for i in range(3))
        context = hooks.at("head", l, softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d) + causal(S)) @ v)
        W_o, b_o = w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"]
        o = hooks.at("attn_out", l, context.transpose(1, 0, 2).reshape(S, N) @ W_o + b_o)
        x = x + o
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        f = hooks.at("mlp_out", l, gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @
                     w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"])
        x = x + f
        heads = [context[hh, -1] @ W_o[hh * d:(hh + 1) * d] for hh in range(H)]
        parts["layers"].append({"heads": heads, "attn_bias": b_o, "mlp": f[-1]})
    head = w["wte.weight"] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    final = {"residual": x[-1], "gamma": w["ln_f.weight"], "beta": w["ln_f.bias"], "eps": eps, "rms": False,
             "W_U": head, "b_U": None}
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps) @ head.T, (parts, final)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def llama_model(name):
    w = read_safetensors(os.path.join(CHECKPOINTS, name, "model.safetensors"))
    c = json.load(open(os.path.join(CHECKPOINTS, name, "config.json")))
    return {"config": c, "w": w, "kind": "llama"}


def llama_run(model, ids, hooks):
    c, w = model["config"], model["w"]
    N, H = c["hidden_size"], c["num_attention_heads"]
    G, eps = c["num_key_value_heads"], c["rms_norm_eps"]
    d, S = N // H, len(ids)
    inv_freq = 1.0 / c["rope_theta"] ** (np.arange(0, d, 2) / d)
    angle = np.arange(S)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(np.concatenate([angle, angle], -1)), np.sin(np.concatenate([angle, angle], -1))
    x = w["model.embed_tokens.weight"][ids]
    parts = {"embed": x.copy(), "layers": []}
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        x = hooks.at("resid_pre", l, x)
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(S, H, d).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(S, G, d).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(S, G, d).transpose(1, 0, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = np.repeat(k, H // G, axis=0), np.repeat(v, H // G, axis=0)  # repeat_kv
        context = hooks.at("head", l, softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d) + causal(S)) @ v)
        W_o = w[p + "self_attn.o_proj.weight"].T
        o = hooks.at("attn_out", l, context.transpose(1, 0, 2).reshape(S, N) @ W_o)
        x = x + o
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        g = h @ w[p + "mlp.gate_proj.weight"].T
        f = hooks.at("mlp_out", l, (g / (1 + np.exp(-g)) * (h @ w[p + "mlp.up_proj.weight"].T)) @
                     w[p + "mlp.down_proj.weight"].T)
        x = x + f
        heads = [context[hh, -1] @ W_o[hh * d:(hh + 1) * d] for hh in range(H)]
        parts["layers"].append({"heads": heads, "attn_bias": None, "mlp": f[-1]})
    head = w["lm_head.weight"]
    final = {"residual": x[-1], "gamma": w["model.norm.weight"], "beta": None, "eps": eps, "rms": True,
             "W_U": head, "b_U": None}
    return rms_norm(x, w["model.norm.weight"], eps) @ head.T, (parts, final)


# ---- the experiments ---------------------------------------------------------------------------


def metric(logits, answer, wrong):
    return logits[-1, answer] - (logits[-1, wrong] if wrong is not None else 0.0)


def patch_case(run, model, clean_ids, corrupt_ids, answer, wrong, layers, H):
    clean_hooks = Hooks()
    clean_logits = run(model, clean_ids, clean_hooks)[0]
    corrupt_logits = run(model, corrupt_ids, Hooks())[0]
    S = len(clean_ids)
    sites = []
    for l in range(layers):
        for kind in ("resid_pre", "attn_out", "mlp_out", "head"):
            for index in range(H if kind == "head" else S):
                clean = clean_hooks.seen[(kind, l)]
                logits = run(model, corrupt_ids, Hooks({(kind, l): [(index, clean)]}))[0]
                sites.append({"kind": kind, "layer": l, "index": index, "value": metric(logits, answer, wrong)})
    # the identity: every position of layer 1's resid_pre patched at once gives the clean run
    every = [(p, clean_hooks.seen[("resid_pre", 1)]) for p in range(S)]
    together = metric(run(model, corrupt_ids, Hooks({("resid_pre", 1): every}))[0], answer, wrong)
    return {"clean_ids": clean_ids, "corrupt_ids": corrupt_ids, "answer": answer, "wrong": wrong,
            "clean": metric(clean_logits, answer, wrong), "corrupt": metric(corrupt_logits, answer, wrong),
            "resid_pre_1_every_position": together, "sites": sites}


def attribution(run, model, ids, answer, wrong):
    logits, (parts, final) = run(model, ids, Hooks())
    R, gamma, W_U = final["residual"], final["gamma"], final["W_U"]
    scale = 1.0 / (np.sqrt((R * R).mean() + final["eps"]) if final["rms"] else
                   np.sqrt(((R - R.mean()) ** 2).mean() + final["eps"]))
    u = W_U[answer] - W_U[wrong]
    project = lambda c: float(((c if final["rms"] else c - c.mean()) * scale * gamma) @ u)  # noqa: E731
    components = [{"name": "embed", "value": project(parts["embed"][-1])}]
    for l, layer in enumerate(parts["layers"]):
        for h, c in enumerate(layer["heads"]):
            components.append({"name": f"L{l}H{h}", "value": project(c)})
        if layer["attn_bias"] is not None:
            components.append({"name": f"L{l}.attn_bias", "value": project(layer["attn_bias"])})
        components.append({"name": f"L{l}.mlp", "value": project(layer["mlp"])})
    if final["beta"] is not None:
        components.append({"name": "final_norm_bias", "value": float(final["beta"] @ u)})
    return {"ids": ids, "answer": answer, "wrong": wrong, "total": metric(logits, answer, wrong),
            "scale": scale, "components": components}


def main():
    induction = induction_model()
    vocab = induction["vocab"]
    tokens = lambda text: [vocab.index(t) for t in text.split()]  # noqa: E731
    clean, corrupt = tokens("<BOS> a b c d e f a b c d e"), tokens("<BOS> a b c d q f a b c d e")
    f, q = vocab.index("f"), vocab.index("q")
    cases = {"induction": patch_case(induction_run, induction, clean, corrupt, f, q, 2, 2)}
    cases["induction"]["logit_only"] = patch_case(induction_run, induction, clean, corrupt, f, None, 2, 2)
    lens = induction_run(induction, clean, Hooks())[1]
    cases["induction"]["lens_f"] = []
    for logits in lens:
        p = softmax(logits[-1])
        cases["induction"]["lens_f"].append({"rank": int((p > p[f]).sum() + 1), "logit": float(logits[-1, f]),
                                             "probability": float(p[f])})
    hf_clean, hf_corrupt = [3, 14, 1, 7, 7, 0, 11], [3, 9, 1, 7, 2, 0, 11]
    for name, run, load, H in (("gpt2_f32", gpt2_run, gpt2_model, 2), ("gpt2_f32_untied", gpt2_run, gpt2_model, 2),
                               ("llama_f32", llama_run, llama_model, 4)):
        model = load(name)
        case = patch_case(run, model, hf_clean, hf_corrupt, 5, 9, 2, H)
        case["attribution"] = attribution(run, model, hf_clean, 5, 9)
        cases[name] = case
    json.dump(cases, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
