#!/usr/bin/env python3
"""The loss `attn grad --model DIR TEXT` computes with no labels, for tests/cli.

A causal language model's loss on a text is the cross-entropy of the text's own next tokens:
Hugging Face's model(input_ids, labels=input_ids), which shifts them inside the loss
(transformers' loss_utils.ForCausalLMLoss pads the labels with ignore_index -100 on the right
and takes labels[..., 1:], so position t is scored on token t+1 and the last position on
nothing; the mean is over the S-1 scored positions). Here that is computed in float64 on
gpt2_tokenizer_f16 (GPT-2's real tokenizer beside random F16 weights, written by
make_hf_checkpoints.py), with the forward pass make_hf_checkpoints.py follows from
modeling_gpt2.py, on the ids gpt-3-encoder gives for its text (expected.json).

Writes tests/reference/causal_lm/gpt2_tokenizer_f16.json: {"text", "ids", "loss", "losses"}
(losses: -log p of each next token, position 0 first).

Run from the repository: python3 tests/reference/make_causal_lm_loss.py
"""
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_hf_checkpoints import gpt2_forward  # noqa: E402
from torch_common import write_json  # noqa: E402

torch.set_default_dtype(torch.float64)
CASE = "gpt2_tokenizer_f16"
DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64}


def read_safetensors(path):
    """name -> float64 tensor, each stored value widened exactly (8 bytes of header length,
    the JSON header, the raw little-endian data: huggingface/safetensors' README)."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        values = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]]).astype(np.float64)
        out[name] = torch.from_numpy(values.reshape(info["shape"]).copy())
    return out


def main():
    folder = os.path.join(HERE, "hf_checkpoints", CASE)
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(folder, "expected.json")) as f:
        expected = json.load(f)
    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    ids = torch.tensor(expected["ids"])
    logits, _ = gpt2_forward(config, weights, ids, "")  # (S, V)
    # ForCausalLMLoss: labels = input_ids, padded with -100 and shifted by one
    labels = torch.nn.functional.pad(ids[None], (0, 1), value=-100)[:, 1:]
    losses = torch.nn.functional.cross_entropy(logits, labels[0], ignore_index=-100, reduction="none")
    loss = torch.nn.functional.cross_entropy(logits, labels[0], ignore_index=-100)
    write_json(os.path.join(HERE, "causal_lm", CASE + ".json"),
               {"text": expected["text"], "ids": expected["ids"], "loss": loss.item(),
                "losses": losses[:-1].tolist()}, indent=1)
    print(f"{CASE}: {expected['text']!r}, loss {loss.item()!r}")


if __name__ == "__main__":
    main()
