# Reference values for tests/analysis/head_scores_test.cpp, made once with Debian's NumPy:
#   /usr/bin/python3 tests/reference/make_head_score_cases.py > tests/reference/head_score_cases.json
# Each case: a head's causal attention weights w (S,S) (a softmax of seeded random scores, the
# future masked), the token ids, and every score of docs/heads.md computed here with NumPy
# from the definitions alone (None where no position qualifies).
#
# With --from-dump TRACE.npz (`attn explain ... --quiet --dump TRACE.npz` of the sequence
# `attn heads` reads), writes what `attn heads --json` must print for that run, every score
# recomputed here from the dumped weights: tests/cli/expected/heads_*.json, which the CLI
# tests compare with attn's output byte for byte (see tests/cli/CMakeLists.txt).
import json
import sys

import numpy as np


def causal_weights(rng, S, sharpness):
    scores = rng.randn(S, S) * sharpness
    scores[np.triu_indices(S, k=1)] = -np.inf
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def latest_earlier(tokens, p):
    earlier = [q for q in range(p) if tokens[q] == tokens[p]]
    return earlier[-1] if earlier else None


def mean(values):
    return float(np.mean(np.array(values))) if values else None


def scores(w, tokens):
    S = len(tokens)
    p1 = np.arange(1, S)
    repeated = [p for p in range(1, S) if latest_earlier(tokens, p) is not None]
    tok = np.array(tokens)
    return {
        "previous_token": mean(list(w[p1, p1 - 1])),
        "first_token": mean(list(w[p1, 0])),
        "induction": mean([w[p, latest_earlier(tokens, p) + 1] for p in repeated]),
        "induction_2": mean([w[p, latest_earlier(tokens, p) + 2] for p in repeated
                             if latest_earlier(tokens, p) + 2 <= p]),
        "duplicate_token": mean([float(np.sum(w[p, :p][tok[:p] == tok[p]])) for p in repeated]),
        "self": mean(list(w[p1, p1])),
    }


def role(s):
    best, value = "mixed", 0.5
    for name, v in s.items():
        if v is not None and v >= value:
            best, value = name, v
    return best


def from_dump(path):
    trace = np.load(path)
    meta = json.loads(bytes(trace["__meta__.json"]))
    out = {"sequence": meta["tokens"]["source"]}
    if "target" in meta["tokens"] and meta["model"].get("architecture") != "decoder-only":
        out["target"] = meta["tokens"]["target"]
    heads = []
    for name in trace.files:  # in the order the model computed them
        parts = name.split(".")
        if parts[-1] != "weights" or parts[-2] == "cross_attention":
            continue
        ids = trace["target_tokens.ids" if parts[0] == "decoder" and "target_tokens.ids" in trace.files
                    else "tokens.ids"]
        for h, w in enumerate(trace[name]):
            s = scores(w, [int(t) for t in ids])
            heads.append({"block": parts[0] + "." + parts[2], "layer": int(parts[1]), "head": h, **s, "role": role(s)})
    out["heads"] = heads
    print(json.dumps(out, separators=(",", ":")))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--from-dump":
        from_dump(sys.argv[2])
        return
    rng = np.random.RandomState(23)
    cases = []
    # a repeated segment with filler, as attn train --task induction makes them; a sequence
    # with a token repeated three times and back to back; one with no repeat; one token.
    token_lists = [
        [0, 7, 3, 9, 4, 5, 8, 3, 9, 4, 5],
        [0, 4, 4, 6, 4, 2, 6, 4],
        [0, 1, 2, 3, 4, 5],
        [0],
    ]
    for i, tokens in enumerate(token_lists):
        w = causal_weights(rng, len(tokens), 2.0 + i)
        cases.append({"tokens": tokens, "weights": [[float(v) for v in row] for row in w],
                      "scores": scores(w, tokens)})
    json.dump({"cases": cases}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
