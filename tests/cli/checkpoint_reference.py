#!/usr/bin/env python3
"""A real tokenizer through the load door, against references no one here computed with attn.

The folder tests/reference/hf_checkpoints/gpt2_tokenizer_f16 holds GPT-2's own vocab.json
and merges.txt beside small random F16 weights (make_hf_checkpoints.py). attn reads it with
--model, as a user would, and must agree with
- the ids gpt-3-encoder@1.1.4 gives the text (tests/reference/tokenizers/gpt2.json),
- the float64 evaluation of modeling_gpt2.py on the stored weights: each position's 20
  largest logits and every attention weight within 1e-12,
- greedy generation's picks (attn runs them through its KV cache), decoded as GPT-2's
  byte-level decoder does.

    checkpoint_reference.py CASE ATTN SOURCE_DIR
"""
import json
import subprocess
import sys

case, attn, source = sys.argv[1:4]
folder = f"{source}/tests/reference/hf_checkpoints/gpt2_tokenizer_f16"
with open(f"{folder}/expected.json") as f:
    expected = json.load(f)
TOLERANCE = 1e-12


def fail(message):
    sys.exit(f"FAIL ({case}): {message}")


def run(*args):
    done = subprocess.run([attn, *args], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"attn {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def flat(value):
    return [x for v in value for x in flat(v)] if isinstance(value, list) else [value]


def bytes_to_unicode():  # GPT-2's encoder.py: the printable stand-in of each byte
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


if case == "explain":
    dump = json.loads(run("explain", "--model", folder, expected["text"], "--quiet", "--dump", "-"))
    tensors = {t["name"]: t for t in dump["tensors"]}
    ids = [int(i) for i in flat(tensors["tokens.ids"]["data"])]
    if ids != expected["ids"]:
        fail(f"ids {ids}, gpt-3-encoder's {expected['ids']}")
    logits = tensors["output.logits"]
    V = logits["shape"][-1]
    rows = flat(logits["data"])
    worst = 0.0
    for s, top in enumerate(expected["top_logits"]):
        row = rows[s * V:(s + 1) * V]
        ours = sorted(range(V), key=lambda i: -row[i])[:len(top["ids"])]
        if ours != top["ids"]:
            fail(f"position {s}: top ids {ours}, the reference's {top['ids']}")
        worst = max(worst, max(abs(row[i] - v) for i, v in zip(top["ids"], top["logits"])))
    for layer, weights in enumerate(expected["attention_weights"]):
        got = flat(tensors[f"decoder.{layer}.self_attention.weights"]["data"])
        want = flat(weights)
        if len(got) != len(want):
            fail(f"decoder.{layer}: {len(got)} attention weights, the reference has {len(want)}")
        worst = max(worst, max(abs(a - b) for a, b in zip(got, want)))
    if not worst <= TOLERANCE:
        fail(f"worst error {worst} over the top logits and attention weights")
    checkpoint = dump["model"]["checkpoint"]
    if checkpoint["architecture"] != "GPT2LMHeadModel" or checkpoint["tensor_names"][
            "decoder.0.self_attention.W_q"] != "h.0.attn.c_attn.weight[:, 0:4]":
        fail(f"the dump's checkpoint section: {checkpoint['architecture']}, {checkpoint['tensor_names']}")
    print(f"ids {ids}; worst error {worst:.1e}")
elif case == "generate":
    picks = [s["id"] for s in expected["greedy"]]
    with open(f"{source}/tests/data/gpt2/vocab.json", encoding="utf-8") as f:
        pieces = {i: p for p, i in json.load(f).items()}
    byte_of = bytes_to_unicode()
    text = bytes(byte_of[c] for i in picks for c in pieces[i]).decode("utf-8", errors="replace")
    out = run("generate", "--model", folder, expected["text"], "-n", str(len(picks)), "--quiet")
    # --quiet prints the text exactly as decoded, then a newline (issue 31: it was quoted)
    if out != text + "\n":
        fail(f"generated {out!r}, the reference's picks {picks} decode to {text!r}")
    print(f"greedy {picks}: {out.strip()}")
else:
    fail("unknown case")
