"""Tiny MarianMTModel and BartForConditionalGeneration checkpoints and what they compute, for
tests/checkpoint/hf_seq2seq_test.cpp (make_hf_checkpoints.py --seq2seq writes them).

Each case is a folder as save_pretrained writes it (config.json, model.safetensors written
by hand in F32, F16, BF16 or F64; Marian's sinusoid table left out as MarianMTModel's
_keys_to_ignore_on_save leaves it out, or kept as older files keep it) and expected.json:
the source and target ids run, the logits (T, V), every attention weight (the encoder's
self-attention (H,S,S), the decoder's masked self-attention (H,T,T) and cross-attention
(H,T,S), per layer), greedy generation (each step's logits and pick, bad_words_ids never
picked, stopping at eos_token_id) and the gradient of the mean cross-entropy of the target
shifted left (labels) for every weight, by torch autograd.

The forward is written from transformers' models/marian/modeling_marian.py and
models/bart/modeling_bart.py (MarianSinusoidalPositionalEmbedding._init_weight,
BartLearnedPositionalEmbedding's offset 2, eager_attention_forward with scaling
head_dim**-0.5, MarianEncoderLayer / MarianDecoderLayer (post-norm), layernorm_embedding,
lm_head + final_logits_bias), step by step in float64 on the stored values widened exactly.

With --attn, each Marian case whose stacks have one feed-forward width and one head count is also written as an
attn model file (its sinusoid table as a "learned" table, its tied head with the bias as
W = Eᵀ and b) and run by attn's own encoder-decoder: logits and every attention weight must
agree to 1e-12 before anything is written.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

from torch_common import out_dir, write_case_list, write_json

OUT = out_dir("hf_seq2seq")
SOURCE = [3, 9, 4, 12, 0]  # the source ids (Marian's tokenizer ends them with </s>, id 0 here)
TARGET = [5, 11, 2, 7]  # the target's ids, after decoder_start_token_id
GENERATED = 5

# ---- the reference forward ---------------------------------------------------------------


def sinusoidal_table(P, N):
    """MarianSinusoidalPositionalEmbedding._init_weight: float64 sines and cosines, stored as float32."""
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / N) for j in range(N)] for pos in range(P)])
    out = torch.empty(P, N, dtype=torch.float32, requires_grad=False)
    sentinel = N // 2 if N % 2 == 0 else (N // 2) + 1
    out[:, 0:sentinel] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, sentinel:] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out.double()


def activation(name):  # ACT2FN
    return {"swish": torch.nn.functional.silu, "silu": torch.nn.functional.silu, "relu": torch.nn.functional.relu,
            "gelu": torch.nn.functional.gelu,
            "gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))}[name]


def linear(x, w, b=None):  # nn.Linear
    return torch.nn.functional.linear(x, w, b)


def layer_norm(x, w, p):  # nn.LayerNorm(d_model): eps 1e-5
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w[p + ".weight"], w[p + ".bias"], 1e-5)


def attention(x, kv, w, p, H, mask):
    """MarianAttention / BartAttention with eager_attention_forward: (out, weights (1,H,T,S))."""
    B, T, N = x.shape
    S, d = kv.shape[1], N // H
    q = linear(x, w[p + "q_proj.weight"], w[p + "q_proj.bias"]).view(B, T, -1, d).transpose(1, 2)
    k = linear(kv, w[p + "k_proj.weight"], w[p + "k_proj.bias"]).view(B, S, -1, d).transpose(1, 2)
    v = linear(kv, w[p + "v_proj.weight"], w[p + "v_proj.bias"]).view(B, S, -1, d).transpose(1, 2)
    a = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5
    if mask is not None:
        a = a + mask
    a = torch.nn.functional.softmax(a, dim=-1)
    o = torch.matmul(a, v).transpose(1, 2).contiguous().reshape(B, T, -1)
    return linear(o, w[p + "out_proj.weight"], w[p + "out_proj.bias"]), a


def ffn(h, w, p, act):
    return linear(act(linear(h, w[p + "fc1.weight"], w[p + "fc1.bias"])), w[p + "fc2.weight"], w[p + "fc2.bias"])


def embedded(c, w, arch, ids, stack):
    """A stack's input: embed_tokens(ids) * embed_scale + positions (BART: then layernorm_embedding)."""
    E = w[shared_name(w)]
    scale = math.sqrt(c["d_model"]) if c.get("scale_embedding", False) else 1.0
    x = E[ids][None] * scale
    n = len(ids)
    if arch == "MarianMTModel":
        table = w.get("model.encoder.embed_positions.weight")
        table = sinusoidal_table(c["max_position_embeddings"], c["d_model"]) if table is None else table
        return x + table[torch.arange(n)]
    x = x + w[f"model.{stack}.embed_positions.weight"][torch.arange(n) + 2]
    return layer_norm(x, w, f"model.{stack}.layernorm_embedding")


def shared_name(w):
    return "model.shared.weight" if "model.shared.weight" in w else "model.encoder.embed_tokens.weight"


def seq2seq_forward(c, w, arch, src, tgt):
    """logits (T, V) and the attention weights {"encoder": [(H,S,S)], "decoder_self": [(H,T,T)],
    "cross": [(H,T,S)]}."""
    H, act = c["encoder_attention_heads"], activation(c["activation_function"])
    Hd = c["decoder_attention_heads"]  # MarianDecoderLayer's heads, self- and cross-attention
    x = embedded(c, w, arch, src, "encoder")
    weights = {"encoder": [], "decoder_self": [], "cross": []}
    for i in range(c["encoder_layers"]):
        p = f"model.encoder.layers.{i}."
        out, a = attention(x, x, w, p + "self_attn.", H, None)
        x = layer_norm(x + out, w, p + "self_attn_layer_norm")
        x = layer_norm(x + ffn(x, w, p, act), w, p + "final_layer_norm")
        weights["encoder"].append(a[0])
    T = len(tgt)
    causal = torch.triu(torch.full((T, T), torch.finfo(torch.float64).min), diagonal=1)
    y = embedded(c, w, arch, tgt, "decoder")
    for i in range(c["decoder_layers"]):
        p = f"model.decoder.layers.{i}."
        out, a = attention(y, y, w, p + "self_attn.", Hd, causal)
        y = layer_norm(y + out, w, p + "self_attn_layer_norm")
        weights["decoder_self"].append(a[0])
        out, a = attention(y, x, w, p + "encoder_attn.", Hd, None)
        y = layer_norm(y + out, w, p + "encoder_attn_layer_norm")
        weights["cross"].append(a[0])
        y = layer_norm(y + ffn(y, w, p, act), w, p + "final_layer_norm")
    head = w[shared_name(w)] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    logits = linear(y, head)
    if "final_logits_bias" in w:
        logits = logits + w["final_logits_bias"]
    return logits[0], weights


def greedy(c, w, arch):
    """Greedy generation from decoder_start_token_id, the whole prefix run every step: each
    step's logits and pick (bad_words_ids never picked), until eos_token_id or GENERATED."""
    ids, steps = [c["decoder_start_token_id"]], []
    never = [words[0] for words in c.get("bad_words_ids") or []]
    for _ in range(GENERATED):
        last = seq2seq_forward(c, w, arch, torch.tensor(SOURCE), torch.tensor(ids))[0][-1]
        allowed = last.clone()
        allowed[never] = -math.inf
        steps.append({"logits": last.tolist(), "id": int(torch.argmax(allowed))})
        if steps[-1]["id"] == c["eos_token_id"]:
            break
        ids.append(steps[-1]["id"])
    return steps


def gradients(c, w, arch, decoder_input, labels):
    """dL/dweight of L = mean cross-entropy of labels, by torch autograd, for every stored
    tensor the forward reads (a tied head's share summed into the shared table)."""
    fixed = [k for k in w if arch == "MarianMTModel" and k.endswith("embed_positions.weight")]  # requires_grad False
    leaves = {k: v if k in fixed else v.clone().requires_grad_(True) for k, v in w.items()}
    logits, _ = seq2seq_forward(c, leaves, arch, torch.tensor(SOURCE), torch.tensor(decoder_input))
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(labels))
    loss.backward()
    return float(loss), {k: v.grad.tolist() for k, v in leaves.items() if v.requires_grad and v.grad is not None}


# ---- the checkpoints -----------------------------------------------------------------------


def seq2seq_weights(c, rng, arch, options):
    """The tensors save_pretrained writes, each drawn from `rng`."""
    N, V, P = c["d_model"], c["vocab_size"], c["max_position_embeddings"]
    r = lambda *shape, s=0.5: rng.standard_normal(shape) * s  # noqa: E731
    w = {"model.shared.weight": r(V, N)}
    if arch == "MarianMTModel" and options.get("table"):
        w["model.encoder.embed_positions.weight"] = sinusoidal_table(P, N).numpy()
        w["model.decoder.embed_positions.weight"] = sinusoidal_table(P, N).numpy()
    norm = lambda p: w.update({p + ".weight": 1 + r(N, s=0.2), p + ".bias": r(N, s=0.1)})  # noqa: E731

    def attention_weights(p):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            w[p + proj + ".weight"], w[p + proj + ".bias"] = r(N, N), r(N, s=0.1)

    for stack in ("encoder", "decoder"):
        F = c[f"{stack}_ffn_dim"]
        if arch == "BartForConditionalGeneration":
            w[f"model.{stack}.embed_positions.weight"] = r(P + 2, N, s=0.3)
            norm(f"model.{stack}.layernorm_embedding")
        for i in range(c[f"{stack}_layers"]):
            p = f"model.{stack}.layers.{i}."
            attention_weights(p + "self_attn.")
            norm(p + "self_attn_layer_norm")
            if stack == "decoder":
                attention_weights(p + "encoder_attn.")
                norm(p + "encoder_attn_layer_norm")
            w[p + "fc1.weight"], w[p + "fc1.bias"] = r(F, N), r(F, s=0.1)
            w[p + "fc2.weight"], w[p + "fc2.bias"] = r(N, F), r(N, s=0.1)
            norm(p + "final_layer_norm")
    if options.get("bias", True):
        w["final_logits_bias"] = r(1, V, s=0.3)
    if not c.get("tie_word_embeddings", True):
        w["lm_head.weight"] = r(V, N)
    return w


def attn_model_file(c, w):
    """A Marian checkpoint as attn's own encoder-decoder model file, where the two coincide:
    the sinusoid table as a learned table, SiLU, post-norm, the head as W = Eᵀ and b."""
    L = lambda t: t.tolist()  # noqa: E731
    V, N, P = c["vocab_size"], c["d_model"], c["max_position_embeddings"]
    vocab = [f"w{i}" for i in range(V)]
    act = {"swish": "silu", "silu": "silu", "relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh"}
    model = {"architecture": "encoder-decoder", "d_model": N, "num_heads": c["encoder_attention_heads"],
             "d_ff": c["encoder_ffn_dim"], "norm_first": False, "activation": act[c["activation_function"]],
             "positional_encoding": "learned", "max_len": P, "layer_norm_eps": 1e-5,
             "scale_embeddings": c.get("scale_embedding", False), "num_layers": c["encoder_layers"],
             "num_decoder_layers": c["decoder_layers"]}

    def attention(p):
        a = {f"W_{k}": L(w[p + f"{n}.weight"].T) for k, n in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"),
                                                              ("o", "out_proj"))}
        a.update({f"b_{k}": L(w[p + f"{n}.bias"]) for k, n in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"),
                                                               ("o", "out_proj"))})
        return a

    norm = lambda p: {"gamma": L(w[p + ".weight"]), "beta": L(w[p + ".bias"])}  # noqa: E731
    ffn = lambda p: {"W_1": L(w[p + "fc1.weight"].T), "b_1": L(w[p + "fc1.bias"]),  # noqa: E731
                     "W_2": L(w[p + "fc2.weight"].T), "b_2": L(w[p + "fc2.bias"])}
    enc = [{"attention": attention(f"model.encoder.layers.{i}.self_attn."),
            "norm1": norm(f"model.encoder.layers.{i}.self_attn_layer_norm"), "ffn": ffn(f"model.encoder.layers.{i}."),
            "norm2": norm(f"model.encoder.layers.{i}.final_layer_norm")} for i in range(c["encoder_layers"])]
    dec = [{"self_attention": attention(f"model.decoder.layers.{i}.self_attn."),
            "norm1": norm(f"model.decoder.layers.{i}.self_attn_layer_norm"),
            "cross_attention": attention(f"model.decoder.layers.{i}.encoder_attn."),
            "norm2": norm(f"model.decoder.layers.{i}.encoder_attn_layer_norm"), "ffn": ffn(f"model.decoder.layers.{i}."),
            "norm3": norm(f"model.decoder.layers.{i}.final_layer_norm")} for i in range(c["decoder_layers"])]
    E = w[shared_name(w)]
    head = E if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    output = {"W": L(head.T)}
    if "final_logits_bias" in w:
        output["b"] = L(w["final_logits_bias"][0])
    table = w.get("model.encoder.embed_positions.weight")
    table = sinusoidal_table(P, N) if table is None else table
    return {"model": model, "vocab": vocab, "embedding": L(E), "positions": L(table), "encoder": enc, "decoder": dec,
            "output": output, "input": {"tokens": [vocab[i] for i in SOURCE],
                                        "target_tokens": [vocab[i] for i in [c["decoder_start_token_id"]] + TARGET]}}


def check_against_attn(attn, folder, c, w, logits, weights):
    """attn's own encoder-decoder on the same weights must agree with the reference to 1e-12."""
    path = os.path.join(folder, "attn.json")
    write_json(path, attn_model_file(c, w))
    run = subprocess.run([attn, "explain", "-c", path, "--quiet", "--dump", "-"], capture_output=True, text=True)
    os.remove(path)
    if run.returncode != 0:
        sys.exit(f"{folder}: attn explain failed: {run.stderr}")
    tensors = {t["name"]: np.array(t["data"], dtype=float) for t in json.loads(run.stdout)["tensors"]}
    worst = np.abs(tensors["output.logits"].reshape(logits.shape) - logits.numpy()).max()
    names = {"encoder": "encoder.{}.attention.weights", "decoder_self": "decoder.{}.self_attention.weights",
             "cross": "decoder.{}.cross_attention.weights"}
    for kind, name in names.items():
        for i, a in enumerate(weights[kind]):
            worst = max(worst, np.abs(tensors[name.format(i)].reshape(a.shape) - a.numpy()).max())
    if not worst <= 1e-12:
        sys.exit(f"{folder}: attn's own encoder-decoder differs from the reference by {worst}")
    return worst


MARIAN = {"architectures": ["MarianMTModel"], "model_type": "marian", "vocab_size": 16, "decoder_vocab_size": 16,
          "d_model": 8, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
          "decoder_attention_heads": 2, "encoder_ffn_dim": 12, "decoder_ffn_dim": 12, "max_position_embeddings": 12,
          "activation_function": "swish", "scale_embedding": True, "share_encoder_decoder_embeddings": True,
          "pad_token_id": 15, "decoder_start_token_id": 15, "eos_token_id": 0, "forced_eos_token_id": 0,
          "bos_token_id": 0, "bad_words_ids": [[15]], "num_beams": 4, "max_length": 12, "is_encoder_decoder": True,
          "normalize_before": False, "normalize_embedding": False, "static_position_embeddings": True}
BART = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "vocab_size": 16, "d_model": 8,
        "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
        "encoder_ffn_dim": 12, "decoder_ffn_dim": 12, "max_position_embeddings": 12, "activation_function": "gelu",
        "scale_embedding": False, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
        "decoder_start_token_id": 2, "forced_eos_token_id": 2, "is_encoder_decoder": True}


def variant(base, **changes):
    c = dict(base)
    c.update(changes)
    return c


# (name, config, dtype, options): table (Marian's sinusoids stored), bias (final_logits_bias),
# bin ("zip" or "legacy": pytorch_model.bin by torch.save instead of model.safetensors).
CASES = [
    ("marian_f32", MARIAN, "F32", {}),
    ("marian_f32_table_d6", variant(MARIAN, d_model=12, encoder_layers=1, decoder_layers=3), "F32", {"table": True}),
    ("marian_f16_wider_decoder", variant(MARIAN, decoder_ffn_dim=20, encoder_layers=3, activation_function="relu",
                                         scale_embedding=False), "F16", {"bias": False}),
    ("marian_f64_untied", variant(MARIAN, tie_word_embeddings=False, activation_function="gelu"), "F64", {}),
    ("bart_f32", BART, "F32", {}),
    ("bart_bf16_scaled", variant(BART, scale_embedding=True, activation_function="gelu_new", d_model=12,
                                 decoder_layers=1), "BF16", {}),
    ("marian_f32_decoder_heads", variant(MARIAN, decoder_attention_heads=4, decoder_layers=1), "F32", {}),
    ("marian_bin_zip_f32", MARIAN, "F32", {"bin": "zip", "table": True}),
    ("bart_bin_legacy_f16", BART, "F16", {"bin": "legacy"}),
]
FIRST_CASES = 6  # the cases written first: their seeds, and the tokenizer case's after them, stay as they were


def write_bin(folder, weights, dtype, legacy):
    """pytorch_model.bin as the opus-mt repositories ship it, written by torch.save (the zip
    format, or the legacy one): the tied copies of the shared table (the encoder's and the
    decoder's embed_tokens, lm_head) saved as views of its one storage. Returns the stored
    values widened to float64."""
    torch_dtype = {"F32": torch.float32, "F16": torch.float16}[dtype]
    state = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)).to(torch_dtype) for k, v in weights.items()}
    shared = state["model.shared.weight"]
    for name in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"):
        state[name] = shared.detach()  # one storage under four names, as a tied model's state_dict holds it
    torch.save(state, os.path.join(folder, "pytorch_model.bin"), _use_new_zipfile_serialization=not legacy)
    return {k: v.to(torch.float64) for k, v in state.items() if k in weights}


def make_case(name, config, dtype, options, seed, attn, write_checkpoint):
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    arch = config["architectures"][0]
    weights = seq2seq_weights(config, np.random.default_rng(seed), arch, options)
    if "bin" in options:
        exact = write_bin(folder, weights, dtype, options["bin"] == "legacy")
    else:
        exact = write_checkpoint(folder, weights, dtype)
    write_json(os.path.join(folder, "config.json"), dict(config, torch_dtype="float32"), indent=2)
    decoder_input = [config["decoder_start_token_id"]] + TARGET
    logits, weights = seq2seq_forward(config, exact, arch, torch.tensor(SOURCE), torch.tensor(decoder_input))
    note = ""
    coincide = config["encoder_ffn_dim"] == config["decoder_ffn_dim"] and (
        config["encoder_attention_heads"] == config["decoder_attention_heads"])  # what a model file can say
    if attn and arch == "MarianMTModel" and coincide:
        note = f", attn's own encoder-decoder within {check_against_attn(attn, folder, config, exact, logits, weights):.1e}"
    labels = TARGET + [config["eos_token_id"]]  # the target shifted left: each position predicts the next
    loss, grads = gradients(config, exact, arch, decoder_input, labels)
    write_json(os.path.join(folder, "expected.json"),
               {"source": SOURCE, "decoder_input": decoder_input, "logits": logits.tolist(),
                "attention_weights": {k: [a.tolist() for a in v] for k, v in weights.items()},
                "greedy": greedy(config, exact, arch), "labels": labels, "loss": loss, "gradients": grads})
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: {size} bytes{note}")


# ---- BART's architecture beside GPT-2's real tokenizer -------------------------------------

TOKENIZER_CASE = "bart_gpt2_tokenizer_f16"
TOKENIZER_SOURCE, TOKENIZER_TARGET = "The cat sat on the mat", "Hello world"
TOP = 20  # the logits kept per position: the largest TOP (V = 50257 is too many to commit)
BART_GPT2 = variant(BART, vocab_size=50257, d_model=4, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=8,
                    decoder_ffn_dim=8, max_position_embeddings=16, pad_token_id=50256, bos_token_id=50256,
                    eos_token_id=50256, decoder_start_token_id=50256, forced_eos_token_id=50256)


def top_logits(row):
    values, ids = torch.topk(row, TOP)
    return {"ids": ids.tolist(), "logits": values.tolist()}


def make_tokenizer_case(write_checkpoint, seed):
    """A BartForConditionalGeneration of d_model 4 beside GPT-2's own vocab.json and
    merges.txt (tests/data/gpt2), so that attn reads it through --model as a user would: the
    ids run are gpt-3-encoder's (tests/reference/tokenizers/gpt2.json), not ours. GPT-2's
    tokenizer adds no special token, so the decoder reads decoder_start_token_id and the
    target's ids. expected.json keeps each position's largest logits, every attention weight
    and greedy generation's picks."""
    folder = os.path.join(OUT, TOKENIZER_CASE)
    os.makedirs(folder)
    for name in ("vocab.json", "merges.txt"):
        os.symlink(os.path.join("..", "..", "..", "data", "gpt2", name), os.path.join(folder, name))
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers", "gpt2.json")) as f:
        reference = json.load(f)
    ids = {c["text"]: c["ids"] for c in reference["cases"]}
    source, target = ids[TOKENIZER_SOURCE], ids[TOKENIZER_TARGET]
    arch = "BartForConditionalGeneration"
    c = BART_GPT2
    exact = write_checkpoint(folder, seq2seq_weights(c, np.random.default_rng(seed), arch, {}), "F16")
    write_json(os.path.join(folder, "config.json"), dict(c, torch_dtype="float16"), indent=2)
    decoder_input = [c["decoder_start_token_id"]] + target
    logits, weights = seq2seq_forward(c, exact, arch, torch.tensor(source), torch.tensor(decoder_input))
    steps, prefix = [], [c["decoder_start_token_id"]]
    for _ in range(GENERATED):
        last = seq2seq_forward(c, exact, arch, torch.tensor(source), torch.tensor(prefix))[0][-1]
        steps.append(dict(top_logits(last), id=int(torch.argmax(last))))
        if steps[-1]["id"] == c["eos_token_id"]:
            break
        prefix.append(steps[-1]["id"])
    # attn grad --target: the labels are the target's ids then eos_token_id (GPT-2's tokenizer adds none)
    labels = target + [c["eos_token_id"]]
    loss = float(torch.nn.functional.cross_entropy(logits, torch.tensor(labels)))
    write_json(os.path.join(folder, "expected.json"),
               {"source_text": TOKENIZER_SOURCE, "target_text": TOKENIZER_TARGET, "source": source,
                "labels": labels, "loss": loss,
                "decoder_input": decoder_input, "ids_from": reference["source"],
                "top_logits": [top_logits(row) for row in logits],
                "attention_weights": {k: [a.tolist() for a in v] for k, v in weights.items()}, "greedy": steps})
    print(f"{TOKENIZER_CASE}: source {source}, decoder input {decoder_input}, greedy {[s['id'] for s in steps]}")


def make_all(attn, write_checkpoint, first_seed):
    import shutil
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for k, (name, config, dtype, options) in enumerate(CASES):
        make_case(name, config, dtype, options, first_seed + k + (k >= FIRST_CASES), attn, write_checkpoint)
    write_case_list(OUT, [c[0] for c in CASES])  # the placeholder-token cases
    make_tokenizer_case(write_checkpoint, first_seed + FIRST_CASES)
