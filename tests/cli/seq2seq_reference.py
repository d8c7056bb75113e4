#!/usr/bin/env python3
"""An encoder-decoder checkpoint through the load door, against references no one here
computed with attn.

The folder tests/reference/hf_seq2seq/bart_gpt2_tokenizer_f16 holds a BartForConditionalGeneration
of d_model 4 beside GPT-2's own vocab.json and merges.txt (hf_seq2seq.py). attn reads it with
--model, as a user would, and must agree with
- the ids gpt-3-encoder@1.1.4 gives the source and the target (tests/reference/tokenizers/gpt2.json),
  the decoder reading decoder_start_token_id and then the target's ids,
- the float64 evaluation of modeling_bart.py on the stored weights: each target position's
  20 largest logits and every attention weight (encoder, decoder self, cross) within 1e-12,
- greedy generation's picks (attn runs them through its KV cache), decoded as GPT-2's
  byte-level decoder does, with the lesson's decoder starting from decoder_start_token_id.

    seq2seq_reference.py CASE ATTN SOURCE_DIR
"""
import json
import subprocess
import sys

case, attn, source = sys.argv[1:4]
folder = f"{source}/tests/reference/hf_seq2seq/bart_gpt2_tokenizer_f16"
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
    dump = json.loads(run("explain", "--model", folder, expected["source_text"], "--target", expected["target_text"],
                          "--quiet", "--dump", "-"))
    tensors = {t["name"]: t for t in dump["tensors"]}
    for name, want in (("tokens.ids", expected["source"]), ("target_tokens.ids", expected["decoder_input"])):
        ids = [int(i) for i in flat(tensors[name]["data"])]
        if ids != want:
            fail(f"{name} {ids}, the reference's {want}")
    logits = tensors["output.logits"]
    V = logits["shape"][-1]
    rows = flat(logits["data"])
    worst = 0.0
    for t, top in enumerate(expected["top_logits"]):
        row = rows[t * V:(t + 1) * V]
        ours = sorted(range(V), key=lambda i: -row[i])[:len(top["ids"])]
        if ours != top["ids"]:
            fail(f"position {t}: top ids {ours}, the reference's {top['ids']}")
        worst = max(worst, max(abs(row[i] - v) for i, v in zip(top["ids"], top["logits"])))
    names = {"encoder": "encoder.{}.attention.weights", "decoder_self": "decoder.{}.self_attention.weights",
             "cross": "decoder.{}.cross_attention.weights"}
    for kind, pattern in names.items():
        for layer, weights in enumerate(expected["attention_weights"][kind]):
            got, want = flat(tensors[pattern.format(layer)]["data"]), flat(weights)
            if len(got) != len(want):
                fail(f"{pattern.format(layer)}: {len(got)} weights, the reference has {len(want)}")
            worst = max(worst, max(abs(a - b) for a, b in zip(got, want)))
    if not worst <= TOLERANCE:
        fail(f"worst error {worst} over the top logits and attention weights")
    if dump["model"]["checkpoint"]["architecture"] != "BartForConditionalGeneration":
        fail(f"the dump's checkpoint section: {dump['model']['checkpoint']['architecture']}")
    print(f"decoder input {expected['decoder_input']}; worst error {worst:.1e}")
elif case == "generate":
    picks = [s["id"] for s in expected["greedy"]]
    with open(f"{source}/tests/data/gpt2/vocab.json", encoding="utf-8") as f:
        pieces = {i: p for p, i in json.load(f).items()}
    byte_of = bytes_to_unicode()
    text = bytes(byte_of[c] for i in picks for c in pieces[i]).decode("utf-8", errors="replace")
    out = run("generate", "--model", folder, expected["source_text"], "-n", str(len(picks)), "--quiet")
    # --quiet prints the text exactly as decoded, then a newline (docs/cli.md; issue 31)
    if out != text + "\n":
        fail(f"generated {out!r}, the reference's picks {picks} decode to {text!r}")
    # explain without a target: the decoder starts from decoder_start_token_id and writes its own
    dump = json.loads(run("explain", "--model", folder, expected["source_text"], "--quiet", "--dump", "-"))
    ids = [int(i) for i in flat({t["name"]: t for t in dump["tensors"]}["target_tokens.ids"]["data"])]
    shared = min(len(ids) - 1, len(picks))  # explain writes up to the source's length + 2
    if ids[:1] != expected["decoder_input"][:1] or ids[1:1 + shared] != picks[:shared]:
        fail(f"explain's own target {ids}, the reference's start and picks {expected['decoder_input'][:1]} {picks}")
    print(f"greedy {picks}: {out.strip()}; explain's own target {ids}")
elif case == "grad":
    # attn grad --target: the decoder reads decoder_start_token_id and the target, and each
    # position predicts the next piece, the last eos_token_id (the target shifted left)
    dump = json.loads(run("grad", "--model", folder, expected["source_text"], "--target", expected["target_text"],
                          "--quiet", "--dump", "-"))
    tensors = {t["name"]: t for t in dump["tensors"]}
    loss = flat(tensors["loss"]["data"])[0]
    if not abs(loss - expected["loss"]) <= TOLERANCE:
        fail(f"loss {loss}, the reference's {expected['loss']} (labels {expected['labels']})")
    for name in ("grad.encoder_embedding_norm.gamma", "grad.decoder_positions", "grad.output.b", "grad.embedding"):
        if name not in tensors:
            fail(f"no {name} in the dump")
    print(f"loss {loss!r}, the reference's {expected['loss']!r}")
elif case == "heads":
    # attn heads scores the decoder on its own greedy target: decoder_start_token_id, then
    # the reference's picks; without TEXT the encoder reads a random repeated sequence and
    # the decoder starts the same way (it once ran with no target at all and crashed)
    with open(f"{source}/tests/data/gpt2/vocab.json", encoding="utf-8") as f:
        pieces = {i: p for p, i in json.load(f).items()}
    start = pieces[expected["decoder_input"][0]]
    want = [start] + [pieces[s["id"]] for s in expected["greedy"]]
    report = json.loads(run("heads", "--model", folder, expected["source_text"], "--json"))
    shared = min(len(report["target"]), len(want))
    if shared < 2 or report["target"][:shared] != want[:shared]:
        fail(f"heads' decoder read {report['target']}, the reference's start and picks {want}")
    blocks = {h["block"] for h in report["heads"]}
    if blocks != {"encoder.attention", "decoder.self_attention"}:
        fail(f"heads scored the blocks {sorted(blocks)}")
    report = json.loads(run("heads", "--model", folder, "--json"))
    if report["target"][:1] != [start] or len(report["sequence"]) < 2 or not report["heads"]:
        fail(f"heads without TEXT: sequence {report['sequence']}, decoder read {report['target']}")
    print(f"decoder read {report['target'][:3]}...; with the text {want[:shared]}")
else:
    fail("unknown case")
