#!/usr/bin/env python3
"""Issue 34's families through the command line: every command on every family.

Each case of tests/reference/hf_checkpoints whose expected.json holds "grad" (GPT-Neo,
GPT-NeoX with and without the parallel residual, Gemma, Phi, Mistral with its window;
make_hf_checkpoints.py) is copied beside a tokenizer.json of 16 one-character pieces ("a" is
0 ... "o" is 14, " " 15), so that the text "dobhhal" is the ids the reference ran and
"obhhald" its labels. Then:
- `attn explain --model DIR dobhhal --lens --quiet --dump F.npz`: output.logits within 1e-12
  of the float64 reference, the last layer's lens.<l>.logits the output's bit for bit;
- `--ablate 1.0`: decoder.1.self_attention.context_ablated has head 0's rows zero and the
  others' as context; the logits change;
- `attn grad --model DIR dobhhal --labels obhhald --quiet --dump F.npz`: the loss and every
  weight's gradient within 1e-12 (of each tensor's largest) of torch's autograd;
- `attn generate --model DIR dob -n 5 --quiet`: the reference's greedy picks up to the
  config's eos_token_id, decoded (no decoder in the tokenizer: the pieces joined by spaces);
- `attn heads --model DIR dobhhal`: a score for every layer's heads, exit 0.

    decoder_families.py ATTN SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

attn, source, work = sys.argv[1:4]
cases_dir = os.path.join(source, "tests", "reference", "hf_checkpoints")
PIECES = "abcdefghijklmno "
TOKENIZER = {"added_tokens": [], "normalizer": None, "pre_tokenizer": None, "decoder": None, "post_processor": None,
             "model": {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False, "byte_fallback": False,
                       "vocab": {c: i for i, c in enumerate(PIECES)}, "merges": []}}
TEXT, PROMPT = "dobhhal", "dob"


def fail(message):
    sys.exit(f"FAIL: {message}")


def run(*args):
    done = subprocess.run([attn, *args], capture_output=True, cwd=work)
    if done.returncode != 0:
        fail(f"attn {' '.join(args)} exited {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout.decode()


def dump(*args):
    path = os.path.join(work, "d.npz")
    run(*args, "--quiet", "--dump", path)
    with np.load(path) as npz:
        tensors = {k: npz[k] for k in npz.files}
    os.remove(path)
    return tensors


def worst(got, want):
    return float(np.abs(np.asarray(got, dtype=float).reshape(-1) - np.asarray(want, dtype=float).reshape(-1)).max())


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
with open(os.path.join(cases_dir, "cases.txt")) as f:
    names = [line.strip() for line in f if line.strip()]
checked = 0
for name in names:
    with open(os.path.join(cases_dir, name, "expected.json")) as f:
        expected = json.load(f)
    if "grad" not in expected:
        continue
    folder = os.path.join(work, name)
    shutil.copytree(os.path.join(cases_dir, name), folder)
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(TOKENIZER, f)
    layers = len(expected["attention_weights"])
    labels = "".join(PIECES[i] for i in expected["grad"]["labels"])

    run_ = dump("explain", "--model", folder, TEXT, "--lens")
    if run_["tokens.ids"].reshape(-1).astype(int).tolist() != expected["ids"]:
        fail(f"{name}: the text runs ids {run_['tokens.ids'].reshape(-1).tolist()}, the reference {expected['ids']}")
    logit_error = worst(run_["output.logits"], expected["logits"])
    if not logit_error <= 1e-12:
        fail(f"{name}: output.logits differ from the reference by {logit_error}")
    if run_[f"lens.{layers - 1}.logits"].tobytes() != run_["output.logits"].tobytes():
        fail(f"{name}: the last layer's lens differs from output.logits")

    ablated = dump("explain", "--model", folder, TEXT, "--ablate", "1.0")
    context, zeroed = ablated["decoder.1.self_attention.context"], ablated["decoder.1.self_attention.context_ablated"]
    if np.any(zeroed[0] != 0) or zeroed[1:].tobytes() != context[1:].tobytes():
        fail(f"{name}: --ablate 1.0 did not zero head 0's context alone")
    if ablated["output.logits"].tobytes() == run_["output.logits"].tobytes():
        fail(f"{name}: ablating head 1.0 changed no logit")

    grads = dump("grad", "--model", folder, TEXT, "--labels", labels)
    loss, want = float(grads["loss"]), expected["grad"]["loss"]
    if not abs(loss - want) <= 1e-12 * abs(want):
        fail(f"{name}: loss {loss!r}, autograd's {want!r}")
    grad_error = 0.0
    for weight, g in expected["grad"]["weights"].items():
        scale = max(abs(x) for x in g["data"]) or 1.0
        error = worst(grads[f"grad.{weight}"], g["data"]) / scale
        if not error <= 1e-12:
            fail(f"{name}: grad.{weight} differs from autograd's by {error} of its largest")
        grad_error = max(grad_error, error)

    with open(os.path.join(folder, "config.json")) as f:
        eos = json.load(f).get("eos_token_id")
    ids = [s["id"] for s in expected["greedy"]]
    ids = ids[:ids.index(eos)] if eos in ids else ids  # generation stops at the end token
    picks = " ".join(PIECES[i] for i in ids)  # no decoder in the tokenizer: pieces joined by spaces
    text = run("generate", "--model", folder, PROMPT, "-n", "5", "--quiet").removesuffix("\n")
    if text != picks:
        fail(f"{name}: generate printed {text}, the reference's picks are {picks!r}")

    heads = run("heads", "--model", folder, TEXT)
    for layer in range(layers):
        if f"\nlayer {layer} " not in heads:
            fail(f"{name}: attn heads names no head of layer {layer}:\n{heads}")
    checked += 1
    print(f"{name}: logits {logit_error:.1e} from the reference, loss and {len(expected['grad']['weights'])} "
          f"gradients within {grad_error:.1e}; lens, --ablate, generate {text}, heads")
if checked < 6:
    fail(f"{checked} cases with gradients, expected at least 6")
