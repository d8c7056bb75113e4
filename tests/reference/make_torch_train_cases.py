#!/usr/bin/env python3
"""Writes torch_train/<case>.json (an attn model file), torch_train/<case>.jsonl (its training
examples, JSON Lines) and torch_train/<case>.expected.json (the options, the loss of every
step and every weight after the last step, as PyTorch's torch.optim trains the same model on
the same batches, float64).

Run once with Debian's python3-torch (1.13); tests/train/torch_train_reference_test.cpp reads
the committed output, so the build never needs PyTorch:
    /usr/bin/python3 tests/reference/make_torch_train_cases.py

How the references are made:
- The model is torch.nn's own (nn.TransformerEncoderLayer + nn.TransformerDecoderLayer, or
  nn.Transformer with its final norms; float64, batch_first, dropout 0), its parameters drawn
  as make_torch_transformer_cases.py draws them, with an embedding, sinusoidal or learned
  positions and a linear or tied output head; the model file holds the same numbers in attn's
  X @ W layout (make_torch_grad_cases.py checks that attn's forward and backward are these
  modules' to 1e-12).
- One step: the batch's sentences padded with <PAD> (key padding masks for the encoder, the
  decoder and the cross-attention, a causal mask for the decoder), the modules' forward,
  F.cross_entropy(logits, labels, ignore_index=<PAD>), backward, then
  torch.nn.utils.clip_grad_norm_ (when clipping), the learning rate of the step written into
  the optimizer's param group (attn's schedule, docs/training.md, formulas below), and
  optimizer.step() of torch.optim.SGD / Adam / AdamW (foreach=False, the single-tensor path).
- The batches are attn's --no-shuffle order: consecutive runs of batch_size examples in the
  file's order, the last of a pass shorter, cycling.

Expected-file format: {"case", "description", "options": {attn train's}, "losses": [every
step's loss], "weights": [{"name", "shape", "data"}] in attn's parameters() order, data flat in
C order}.
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import make_torch_transformer_cases as T
import torch_common as C
from torch_common import entry, nested

torch.set_default_dtype(torch.float64)
DT = torch.float64
OUT_DIR = C.out_dir("torch_train")
VOCAB, PAD = T.VOCAB, T.PAD

# Sentences of different lengths: every batch is padded, labels included.
EXAMPLES = [
    (["the", "cat", "sat"], ["<BOS>", "big", "cat"], ["big", "cat", "sat"]),
    (["dog", "ran"], ["<BOS>", "red", "dog", "ran"], ["red", "dog", "ran", "far"]),
    (["the", "big", "red", "dog"], ["<BOS>", "dog"], ["dog", "sat"]),
    (["mat"], ["<BOS>", "the", "mat"], ["the", "mat", "on"]),
    (["cat", "on", "mat"], ["<BOS>", "cat", "on", "the"], ["cat", "on", "the", "mat"]),
    (["far"], ["<BOS>"], ["ran"]),
]

CASES = [
    dict(name="adam_clip_cosine", kind="layers", N=8, H=2, F=12, act="relu", norm_first=False, output="linear",
         optimizer="adam", lr=0.01, weight_decay=0.0, schedule="cosine", warmup=5, clip=0.5, steps=20,
         batch_size=4),
    dict(name="adamw_noam_tied_prenorm", kind="transformer", N=8, H=4, F=16, act="gelu", norm_first=True,
         output="tied", positions="learned", max_len=6, scale=True, optimizer="adamw", lr=2.0, weight_decay=0.1,
         schedule="noam", warmup=4, clip=0.0, steps=20, batch_size=4),
    dict(name="adam_weight_decay_constant", kind="layers", N=6, H=3, F=10, act="relu", norm_first=False,
         output="linear", optimizer="adam", lr=0.005, weight_decay=0.01, schedule="constant", warmup=3, clip=1.0,
         steps=20, batch_size=3),
    dict(name="sgd_momentum_clip", kind="layers", N=8, H=2, F=12, act="relu", norm_first=True, output="linear",
         optimizer="sgd", lr=0.05, momentum=0.9, weight_decay=0.001, schedule="constant", warmup=0, clip=2.0,
         steps=20, batch_size=4),
]


def learning_rate(c, step, d_model):
    """attn's schedule (docs/training.md): step is 1 for the first update."""
    lr, warmup, total = c["lr"], c["warmup"], c["steps"]
    if c["schedule"] == "noam":
        return lr * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
    if step <= warmup:
        return lr * step / warmup
    if c["schedule"] == "cosine":
        return lr * 0.5 * (1 + math.cos(math.pi * (step - 1 - warmup) / (total - warmup)))
    return lr


def attention_parameters(mha, N):
    W, b = mha.in_proj_weight, mha.in_proj_bias
    return [("W_q", W[:N].T), ("W_k", W[N:2 * N].T), ("W_v", W[2 * N:].T), ("W_o", mha.out_proj.weight.T),
            ("b_q", b[:N]), ("b_k", b[N:2 * N]), ("b_v", b[2 * N:]), ("b_o", mha.out_proj.bias)]


def norm_parameters(norm):
    return [("gamma", norm.weight), ("beta", norm.bias)]


def ffn_parameters(layer):
    return [("W_1", layer.linear1.weight.T), ("b_1", layer.linear1.bias), ("W_2", layer.linear2.weight.T),
            ("b_2", layer.linear2.bias)]


class Model:
    def __init__(self, c):
        N, H, Fw = c["N"], c["H"], c["F"]
        common = dict(dropout=0.0, activation=c["act"], layer_norm_eps=1e-5, batch_first=True,
                      norm_first=c["norm_first"], dtype=DT)
        self.c = c
        self.enc_norm = self.dec_norm = None
        if c["kind"] == "transformer":
            self.module = nn.Transformer(N, H, 1, 1, Fw, **common)
            self.enc, self.dec = list(self.module.encoder.layers), list(self.module.decoder.layers)
            self.enc_norm, self.dec_norm = self.module.encoder.norm, self.module.decoder.norm
        else:
            self.module = nn.ModuleList([nn.TransformerEncoderLayer(N, H, Fw, **common),
                                         nn.TransformerDecoderLayer(N, H, Fw, **common)])
            self.enc, self.dec = [self.module[0]], [self.module[1]]
        for layer in self.enc:
            T.randomize_encoder_layer(layer, N)
        for layer in self.dec:
            T.randomize_decoder_layer(layer, N)
        for norm in (self.enc_norm, self.dec_norm):
            if norm is not None:
                T.randomize_norm(norm)
        self.module.train()
        self.embedding = nn.Parameter(torch.randn(len(VOCAB), N))
        self.positions = nn.Parameter(torch.randn(c["max_len"], N) * 0.5) if c.get("positions") == "learned" else None
        self.head = None
        if c["output"] == "linear":
            self.head = nn.Linear(N, len(VOCAB))
            T.randomize_linear(self.head)

    def parameters(self):
        """Every learned tensor, each once (torch.optim's parameter list)."""
        out = list(self.module.parameters()) + [self.embedding]
        if self.positions is not None:
            out.append(self.positions)
        if self.head is not None:
            out += list(self.head.parameters())
        return out

    def named_weights(self):
        """(attn path, tensor in attn's layout) in attn's parameters() order."""
        N = self.c["N"]
        out = [("embedding", self.embedding)]
        if self.positions is not None:
            out.append(("positions", self.positions))
        for i, layer in enumerate(self.enc):
            out += [(f"encoder.{i}.attention.{k}", t) for k, t in attention_parameters(layer.self_attn, N)]
            out += [(f"encoder.{i}.norm1.{k}", t) for k, t in norm_parameters(layer.norm1)]
            out += [(f"encoder.{i}.ffn.{k}", t) for k, t in ffn_parameters(layer)]
            out += [(f"encoder.{i}.norm2.{k}", t) for k, t in norm_parameters(layer.norm2)]
        if self.enc_norm is not None:
            out += [(f"encoder_norm.{k}", t) for k, t in norm_parameters(self.enc_norm)]
        for j, layer in enumerate(self.dec):
            out += [(f"decoder.{j}.self_attention.{k}", t) for k, t in attention_parameters(layer.self_attn, N)]
            out += [(f"decoder.{j}.norm1.{k}", t) for k, t in norm_parameters(layer.norm1)]
            out += [(f"decoder.{j}.cross_attention.{k}", t) for k, t in attention_parameters(layer.multihead_attn, N)]
            out += [(f"decoder.{j}.norm2.{k}", t) for k, t in norm_parameters(layer.norm2)]
            out += [(f"decoder.{j}.ffn.{k}", t) for k, t in ffn_parameters(layer)]
            out += [(f"decoder.{j}.norm3.{k}", t) for k, t in norm_parameters(layer.norm3)]
        if self.dec_norm is not None:
            out += [(f"decoder_norm.{k}", t) for k, t in norm_parameters(self.dec_norm)]
        if self.head is not None:
            out += [("output.W", self.head.weight.T), ("output.b", self.head.bias)]
        return out

    def embed(self, sentences):
        ids = T.token_ids(sentences)
        x = self.embedding[ids]
        if self.c.get("scale"):
            x = x * math.sqrt(self.c["N"])
        S = ids.shape[1]
        pe = self.positions[:S] if self.positions is not None else T.sinusoidal(S, self.c["N"])
        padding = ids == PAD
        return x + pe, (padding if bool(padding.any()) else None)

    def loss(self, batch):
        src, src_kpm = self.embed([e[0] for e in batch])
        tgt, tgt_kpm = self.embed([e[1] for e in batch])
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1]).to(DT)
        if self.c["kind"] == "transformer":
            h = self.module(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_kpm, tgt_key_padding_mask=tgt_kpm,
                            memory_key_padding_mask=src_kpm)
        else:
            memory = self.module[0](src, src_key_padding_mask=src_kpm)
            h = self.module[1](tgt, memory, tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_kpm,
                               memory_key_padding_mask=src_kpm)
        logits = self.head(h) if self.head is not None else F.linear(h, self.embedding)
        labels = T.token_ids([e[2] for e in batch])
        if labels.shape[1] < logits.shape[1]:
            labels = F.pad(labels, (0, logits.shape[1] - labels.shape[1]), value=PAD)
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=PAD)

    def document(self, description):
        c, N = self.c, self.c["N"]
        doc = {"comment": "Generated by tests/reference/make_torch_train_cases.py: " + description,
               "model": {"d_model": N, "num_heads": c["H"], "d_ff": c["F"], "activation": c["act"],
                         "norm_first": c["norm_first"], "layer_norm_eps": 1e-5,
                         "positional_encoding": c.get("positions", "sinusoidal"),
                         "scale_embeddings": bool(c.get("scale"))},
               "vocab": VOCAB, "embedding": nested(self.embedding)}
        if self.positions is not None:
            doc["model"]["max_len"] = c["max_len"]
            doc["positions"] = nested(self.positions)
        first = EXAMPLES[0]
        doc["input"] = {"tokens": first[0], "target_tokens": first[1], "labels": first[2]}
        doc["encoder"] = [T.encoder_layer_json(layer, N) for layer in self.enc]
        if self.enc_norm is not None:
            doc["encoder_norm"] = T.norm_json(self.enc_norm)
        doc["decoder"] = [T.decoder_layer_json(layer, N) for layer in self.dec]
        if self.dec_norm is not None:
            doc["decoder_norm"] = T.norm_json(self.dec_norm)
        doc["output"] = ({"W": nested(self.head.weight.T), "b": nested(self.head.bias)} if self.head is not None
                         else "tied")
        return doc


def optimizer_of(c, params):
    if c["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=c["lr"], momentum=c.get("momentum", 0.0), weight_decay=c["weight_decay"],
                               foreach=False)
    kind = torch.optim.Adam if c["optimizer"] == "adam" else torch.optim.AdamW
    return kind(params, lr=c["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=c["weight_decay"], foreach=False)


def batches(c):
    """attn's --no-shuffle order: runs of batch_size in file order, the last shorter, cycling."""
    at = 0
    while True:
        end = min(at + c["batch_size"], len(EXAMPLES))
        yield EXAMPLES[at:end]
        at = 0 if end == len(EXAMPLES) else end


def make_case(index, c):
    torch.manual_seed(5000 + index)
    model = Model(c)
    description = (f"{c['kind']}, d_model {c['N']}, {c['H']} heads, {c['act']}, "
                   f"{'pre' if c['norm_first'] else 'post'}-norm, {c['output']} head; {c['steps']} steps of "
                   f"torch.optim.{ {'sgd': 'SGD', 'adam': 'Adam', 'adamw': 'AdamW'}[c['optimizer']] } "
                   f"(lr {c['lr']}, {c['schedule']} schedule, warmup {c['warmup']}, weight decay "
                   f"{c['weight_decay']}{', momentum ' + str(c['momentum']) if 'momentum' in c else ''}"
                   f"{', clip_grad_norm_ ' + str(c['clip']) if c['clip'] else ''}), batches of {c['batch_size']} "
                   f"in file order; PyTorch {torch.__version__}, float64")
    doc = model.document(description)
    params = model.parameters()
    optimizer = optimizer_of(c, params)
    losses = []
    order = batches(c)
    for step in range(1, c["steps"] + 1):
        optimizer.zero_grad()
        loss = model.loss(next(order))
        loss.backward()
        if c["clip"]:
            torch.nn.utils.clip_grad_norm_(params, c["clip"])
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(c, step, c["N"])
        optimizer.step()
        losses.append(float(loss))
    weights = [entry(name, t) for name, t in model.named_weights()]
    options = {k: c[k] for k in ("optimizer", "lr", "weight_decay", "schedule", "warmup", "clip", "steps",
                                 "batch_size")}
    options["momentum"] = c.get("momentum", 0.0)
    expected = {"case": c["name"], "description": description, "options": options, "losses": losses,
                "weights": weights}
    return doc, expected


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    names = []
    for i, c in enumerate(CASES):
        doc, expected = make_case(i, c)
        C.write_json(os.path.join(OUT_DIR, c["name"] + ".json"), doc)
        with open(os.path.join(OUT_DIR, c["name"] + ".jsonl"), "w") as f:
            for src, tgt, labels in EXAMPLES:
                f.write(json.dumps({"tokens": src, "target_tokens": tgt, "labels": labels}) + "\n")
        C.write_json(os.path.join(OUT_DIR, c["name"] + ".expected.json"), expected)
        names.append(c["name"])
    C.write_case_list(OUT_DIR, names)
    print(f"wrote {len(names)} cases to {OUT_DIR} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
