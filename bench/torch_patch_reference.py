#!/usr/bin/env python3
"""Activation patching of resid_pre in PyTorch float64, as an interpretability loop runs it (a
hook replacing block l's input at one position, the whole model run again from the
embeddings, the whole logits computed), on the GPT-2 of bench/torch_gpt2_reference.py, for
bench/patch. The whole process is what is timed, as attn's is: start, read, widen, run.

    python3 bench/torch_patch_reference.py DIR THREADS ANSWER WRONG CLEAN_IDS CORRUPT_IDS

CLEAN_IDS and CORRUPT_IDS are comma-separated. Prints JSON: the clean and corrupted metric
logit(ANSWER) - logit(WRONG) at the last position and every (layer, position)'s.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt2_reference import GPT2  # noqa: E402


def run(model, ids, patch=None, record=None):
    """The forward pass with block l's input read (record[l]) or its row p replaced (patch)."""
    x = model.w["wte.weight"][ids] + model.w["wpe.weight"][:len(ids)]
    for l in range(model.layers):
        if record is not None:
            record.append(x.clone())
        if patch is not None and patch[0] == l:
            x = x.clone()
            x[patch[1]] = patch[2][patch[1]]
        x = model.block(x, l, {})
    return model.ln(x, "ln_f") @ model.w["wte.weight"].T  # (S, V)


def main():
    folder, threads, answer, wrong = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    clean_ids = [int(i) for i in sys.argv[5].split(",")]
    corrupt_ids = [int(i) for i in sys.argv[6].split(",")]
    torch.set_num_threads(threads)
    model = GPT2(folder)
    metric = lambda logits: float(logits[-1, answer] - logits[-1, wrong])  # noqa: E731
    with torch.no_grad():
        clean_inputs = []
        clean = metric(run(model, clean_ids, record=clean_inputs))
        corrupt = metric(run(model, corrupt_ids))
        sites = []
        for l in range(model.layers):
            for p in range(len(corrupt_ids)):
                sites.append({"layer": l, "position": p,
                              "value": metric(run(model, corrupt_ids, patch=(l, p, clean_inputs[l])))})
    print(json.dumps({"clean": clean, "corrupt": corrupt, "sites": sites}))


if __name__ == "__main__":
    main()
