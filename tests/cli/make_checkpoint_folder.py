#!/usr/bin/env python3
"""Writes a small GPT-2 checkpoint folder, then breaks it one way, for the CLI's hostile tests.

    make_checkpoint_folder.py OUT_DIR TOKENIZER_DIR CASE

The good folder: config.json (GPT2LMHeadModel, 1 layer, n_embd 4, 2 heads, n_inner 8,
GPT-2's 50257-token vocabulary, 16 positions), model.safetensors (F32, the values
k/1024 - 0.5 cycled, so every weight is finite and the file is the same every time), and
GPT-2's own vocab.json and merges.txt linked from TOKENIZER_DIR (tests/data/gpt2). CASE
"good" leaves it so; "twelve_by_twelve" is the same with GPT-2 small's 12 layers of 12
heads (n_embd 96, n_inner 384), for the big lesson through --model; any other case names the one thing that is broken (see CASES). Only
the standard library: the safetensors format is 8 bytes of header length, the JSON header
and the raw data (huggingface/safetensors' README).
"""
import json
import os
import struct
import sys

N_EMBD, N_LAYER, N_HEAD, N_INNER, VOCAB, POSITIONS = 4, 1, 2, 8, 50257, 16


def config():
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": VOCAB,
            "n_positions": POSITIONS, "n_embd": N_EMBD, "n_layer": N_LAYER, "n_head": N_HEAD,
            "n_inner": N_INNER, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
            "bos_token_id": 50256, "eos_token_id": 50256}


def tensor_shapes():
    shapes = {"wte.weight": [VOCAB, N_EMBD], "wpe.weight": [POSITIONS, N_EMBD]}
    for layer in range(N_LAYER):
        p = f"h.{layer}."
        shapes.update({p + "ln_1.weight": [N_EMBD], p + "ln_1.bias": [N_EMBD],
                       p + "attn.c_attn.weight": [N_EMBD, 3 * N_EMBD], p + "attn.c_attn.bias": [3 * N_EMBD],
                       p + "attn.c_proj.weight": [N_EMBD, N_EMBD], p + "attn.c_proj.bias": [N_EMBD],
                       p + "ln_2.weight": [N_EMBD], p + "ln_2.bias": [N_EMBD],
                       p + "mlp.c_fc.weight": [N_EMBD, N_INNER], p + "mlp.c_fc.bias": [N_INNER],
                       p + "mlp.c_proj.weight": [N_INNER, N_EMBD], p + "mlp.c_proj.bias": [N_EMBD]})
    shapes.update({"ln_f.weight": [N_EMBD], "ln_f.bias": [N_EMBD]})
    return shapes


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def good_tensors():
    """name -> [dtype, shape, raw bytes]"""
    tensors = {}
    k = 0
    for name, shape in tensor_shapes().items():
        n = count(shape)
        values = [((k + i) % 1024) / 1024 - 0.5 for i in range(n)]
        k += n
        tensors[name] = ["F32", shape, struct.pack(f"<{n}f", *values)]
    return tensors


def safetensors(tensors, header_extra=None):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if header_extra:
        header_extra(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data, len(text)


def write(path, content):
    with open(path, "wb" if isinstance(content, bytes) else "w") as f:
        f.write(content)


QKV = "h.0.attn.c_attn.weight"


def poison(tensors, name, value):
    raw = bytearray(tensors[name][2])
    raw[4:8] = struct.pack("<f", value)  # element 1
    tensors[name][2] = bytes(raw)


def build(out, tokenizer_dir, case):
    os.makedirs(out)
    if case == "twelve_by_twelve":
        global N_EMBD, N_LAYER, N_HEAD, N_INNER
        N_EMBD, N_LAYER, N_HEAD, N_INNER = 96, 12, 12, 384
    cfg, tensors = config(), good_tensors()
    header_extra = None
    # The config's problems.
    if case == "config_missing_field":
        del cfg["n_embd"]
    elif case == "heads_not_dividing":
        cfg["n_head"] = 3
    elif case == "vocab_2_40":
        cfg["vocab_size"] = 2 ** 40
    elif case == "layers_1e9":
        cfg["n_layer"] = 10 ** 9
    elif case == "unsupported_architecture":
        cfg["architectures"] = ["XLNetLMHeadModel"]
    # The weights' problems, found in the header before any weight is read.
    elif case == "missing_weight":
        del tensors["h.0.mlp.c_fc.bias"]
    elif case == "transposed_weight":
        tensors[QKV][1] = [3 * N_EMBD, N_EMBD]
    elif case == "integer_dtype":
        tensors[QKV][0] = "I32"
    elif case == "unknown_dtype":
        tensors[QKV][0] = "F12"
    elif case == "nan_weight":
        poison(tensors, QKV, float("nan"))
    elif case == "minus_inf_weight":
        poison(tensors, "h.0.mlp.c_proj.weight", float("-inf"))
    elif case == "shape_vs_span":
        header_extra = lambda h: h[QKV].update(shape=[N_EMBD, 3 * N_EMBD + 1])
    elif case == "negative_dimension":
        header_extra = lambda h: h[QKV].update(shape=[-4, 12])
    elif case == "fractional_dimension":
        header_extra = lambda h: h[QKV].update(shape=[4.5, 12])
    elif case == "offsets_past_end":
        header_extra = lambda h: h["ln_f.bias"].update(data_offsets=[h["ln_f.bias"]["data_offsets"][0], 10 ** 9])
    elif case == "offsets_overlapping":
        header_extra = lambda h: h["ln_f.bias"].update(data_offsets=h["ln_f.weight"]["data_offsets"])
    # Tensors beyond the plan: a second layer config.json does not count, a tensor GPT-2 has
    # no use for, and the mask buffers older files saved (known unused: the folder loads).
    elif case == "extra_layer":  # (N_LAYER is global: see twelve_by_twelve)
        N_LAYER = 2
        tensors = good_tensors()
    elif case == "unused_tensor":
        tensors["h.0.attn.rotary.weight"] = ["F32", [N_EMBD], struct.pack(f"<{N_EMBD}f", *[0.25] * N_EMBD)]
    elif case == "mask_buffers":
        tensors["h.0.attn.bias"] = ["F32", [1, 1, POSITIONS, POSITIONS], struct.pack(
            f"<{POSITIONS * POSITIONS}f", *[float(j <= i) for i in range(POSITIONS) for j in range(POSITIONS)])]
        tensors["h.0.attn.masked_bias"] = ["F32", [], struct.pack("<f", -1e4)]
    if case == "sharded_missing_shard":  # the index puts ln_f.bias in a shard that is not there
        shard2 = {"ln_f.bias": tensors.pop("ln_f.bias")}
    content, header_len = safetensors(tensors, header_extra)
    if case == "header_length_past_end":
        content = struct.pack("<Q", len(content) + 100) + content[8:]
    elif case == "header_length_2_63":
        content = struct.pack("<Q", 2 ** 63) + content[8:]
    elif case == "header_not_json":
        content = content[:8] + b"[" * header_len + content[8 + header_len:]
    write(os.path.join(out, "config.json"), json.dumps(cfg, indent=2))
    if case == "sharded_missing_shard":
        index = {"metadata": {}, "weight_map": {name: "model-00001-of-00002.safetensors" for name in tensors}}
        index["weight_map"].update({name: "model-00002-of-00002.safetensors" for name in shard2})
        write(os.path.join(out, "model.safetensors.index.json"), json.dumps(index))
        write(os.path.join(out, "model-00001-of-00002.safetensors"), content)
    else:
        write(os.path.join(out, "model.safetensors"), content)
    # The tokenizer's problems.
    vocab = os.path.join(tokenizer_dir, "vocab.json")
    merges = os.path.join(tokenizer_dir, "merges.txt")
    if case == "no_tokenizer":
        return
    if case == "truncated_vocab":
        with open(vocab, "rb") as f:
            write(os.path.join(out, "vocab.json"), f.read()[:5000])
    else:
        os.symlink(os.path.abspath(vocab), os.path.join(out, "vocab.json"))
    if case == "malformed_merges":
        with open(merges, encoding="utf-8") as f:
            lines = f.read().split("\n")
        lines[10] = "Ġt he extra"
        write(os.path.join(out, "merges.txt"), "\n".join(lines))
    else:
        os.symlink(os.path.abspath(merges), os.path.join(out, "merges.txt"))


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], sys.argv[3])
