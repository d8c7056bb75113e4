"""attn generate --beams from a text, through a real tokenizer, against transformers' beam search
(tests/reference/make_beam_cases.py's run on hf_seq2seq/bart_gpt2_tokenizer_f16: BART's
architecture beside GPT-2's vocab.json and merges.txt). attn reads "The cat sat on the mat" as a
user types it; --json's answer (ids, score) and every hypothesis kept (ids, score) must be the
reference's, the scores within 1e-12, and --quiet must print --json's text alone.

    beam_reference.py ATTN SOURCE_DIR
"""
import json
import os
import subprocess
import sys

attn, source_dir = sys.argv[1], sys.argv[2]
reference = os.path.join(source_dir, "tests", "reference")
with open(os.path.join(reference, "beam_search", "cases.json")) as f:
    run = next(r for r in json.load(f)["runs"] if r["case"] == "hf_seq2seq/bart_gpt2_tokenizer_f16")
with open(os.path.join(reference, run["case"], "expected.json")) as f:
    text = json.load(f)["source_text"]
out = subprocess.run([attn, "generate", "--model", os.path.join(reference, run["case"]), text, "--beams",
                      str(run["beams"]), "--length-penalty", str(run["length_penalty"]), "--early-stopping",
                      json.dumps(run["early_stopping"]).strip('"'), "-n", str(run["max_new_tokens"]), "--json"],
                     capture_output=True, text=True)
if out.returncode != 0 or out.stderr:
    sys.exit(f"FAIL: exit {out.returncode}: {out.stderr}")
got = json.loads(out.stdout)
prompt = len(run["prefix"])


def near(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def ids(tokens, ended):
    tokens = tokens[prompt:]
    return tokens[:-1] if ended and tokens and tokens[-1] in run["eos"] else tokens


expected = run["hypotheses"]
failures = []
if len(got["hypotheses"]) != len(expected):
    failures.append(f"{len(got['hypotheses'])} hypotheses, expected {len(expected)}")
for i, (g, e) in enumerate(zip(got["hypotheses"], expected)):
    if g["ids"] != e["tokens"][prompt:] or not near(g["score"], e["score"]):
        failures.append(f"hypothesis {i}: {g['ids']} {g['score']!r}, expected {e['tokens'][prompt:]} {e['score']!r}")
best = got["hypotheses"][0] if got["hypotheses"] else {"ended": False}
if got["ids"] != ids(run["result"]["tokens"], best["ended"]) or not near(got["score"], run["result"]["score"]):
    failures.append(f"answer {got['ids']} {got['score']!r}, expected {run['result']}")
# --quiet: the answer's text alone, as --json gives it
quiet = subprocess.run(out.args[:-1] + ["--quiet"], capture_output=True, text=True)
if quiet.returncode != 0 or quiet.stdout != got["text"] + "\n":
    failures.append(f"--quiet printed {quiet.stdout!r} (exit {quiet.returncode}), --json's text {got['text']!r}")
if failures:
    sys.exit("FAIL: " + "; ".join(failures))
print(f"beam search from the text: {got['ids']} ({got['text']!r}), score {got['score']!r}, as the reference")
