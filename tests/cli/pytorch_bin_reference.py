#!/usr/bin/env python3
"""pytorch_model.bin through --model gives what model.safetensors gives, bit for bit.

For each "BIN_CASE SAFETENSORS_CASE" of tests/reference/hf_checkpoints/bin_cases.txt
(hf_checkpoints_bin.py: torch.save's zip and legacy formats, shards, F32, F16, BF16, F64,
tied heads stored once under two names), both folders are copied beside a tokenizer.json of
16 one-character pieces ("a" is 0 ... "o" is 14, " " 15), so that the text "dobhhal" is the
ids make_hf_checkpoints.py ran, [3, 14, 1, 7, 7, 0, 11]. Then
- `attn explain --model DIR dobhhal --quiet --dump F.npz`: output.logits of the .bin folder
  are the safetensors folder's, bit for bit, with the weights kept as stored and widened at
  load (ATTN_WIDEN_WEIGHTS=1), and within 1e-12 of the case's float64 reference
  (expected.json, from the modeling files);
- `attn generate --model DIR dob -n 5 --quiet` prints the same text from either folder.

    pytorch_bin_reference.py ATTN SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

attn, source, work = sys.argv[1:4]
cases_dir = os.path.join(source, "tests", "reference", "hf_checkpoints")
TOKENIZER = {"added_tokens": [], "normalizer": None, "pre_tokenizer": None, "decoder": None, "post_processor": None,
             "model": {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False, "byte_fallback": False,
                       "vocab": {c: i for i, c in enumerate("abcdefghijklmno ")}, "merges": []}}
TEXT = "dobhhal"


def fail(message):
    sys.exit(f"FAIL: {message}")


def run(*args, widen=False):
    env = dict(os.environ, ATTN_WIDEN_WEIGHTS="1" if widen else "0")
    done = subprocess.run([attn, *args], capture_output=True, env=env, cwd=work)
    if done.returncode != 0:
        fail(f"attn {' '.join(args)} exited {done.returncode}: {done.stderr.decode().strip()}")
    return done.stdout


def folder_with_tokenizer(name):
    folder = os.path.join(work, name)
    shutil.copytree(os.path.join(cases_dir, name), folder)
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(TOKENIZER, f)
    return folder


def logits(folder, widen=False):
    dump = os.path.join(work, "d.npz")
    run("explain", "--model", folder, TEXT, "--quiet", "--dump", dump, widen=widen)
    with np.load(dump) as npz:
        ids = npz["tokens.ids"].reshape(-1).astype(int).tolist()
        values = npz["output.logits"]
    os.remove(dump)
    return ids, values


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
with open(os.path.join(cases_dir, "bin_cases.txt")) as f:
    cases = [line.split() for line in f if line.strip()]
if len(cases) < 10:
    fail(f"{len(cases)} cases in bin_cases.txt, expected at least 10")
for bin_case, safetensors_case in cases:
    with open(os.path.join(cases_dir, safetensors_case, "expected.json")) as f:
        expected = json.load(f)
    pickled, safe = folder_with_tokenizer(bin_case), folder_with_tokenizer(safetensors_case)
    ids, from_bin = logits(pickled)
    if ids != expected["ids"]:
        fail(f"{bin_case}: the text runs ids {ids}, the reference ran {expected['ids']}")
    _, from_safetensors = logits(safe)
    _, widened = logits(pickled, widen=True)
    for what, other in (("model.safetensors", from_safetensors), ("the .bin widened at load", widened)):
        if from_bin.shape != other.shape or from_bin.tobytes() != other.tobytes():
            fail(f"{bin_case}: output.logits differ from {what}'s")
    worst = float(np.abs(from_bin.reshape(-1) - np.array(expected["logits"]).reshape(-1)).max())
    if not worst <= 1e-12:
        fail(f"{bin_case}: output.logits differ from the reference by {worst}")
    text = run("generate", "--model", pickled, "dob", "-n", "5", "--quiet")
    if text != run("generate", "--model", safe, "dob", "-n", "5", "--quiet"):
        fail(f"{bin_case}: generate gives {text!r}, unlike {safetensors_case}")
    print(f"{bin_case}: the logits of {safetensors_case} bit for bit, {worst:.1e} from the reference; "
          f"generate {text.decode().strip()!r}")
