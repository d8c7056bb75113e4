#!/usr/bin/env python3
"""Hugging Face beam search (generate(num_beams=N, ...)) on the tiny checkpoints already committed
in tests/reference/hf_seq2seq/ and tests/reference/hf_checkpoints/, in float64, for attn's beam
search. Writes tests/reference/beam_search/cases.json.

The models are the existing references, read, not rewritten: hf_seq2seq.py's seq2seq_forward
(MarianMTModel, BartForConditionalGeneration) and make_hf_checkpoints.py's gpt2_forward and
llama_forward, on the stored values read back here from model.safetensors (a small reader: 8
bytes of little-endian header length, the JSON header, the raw data; F64, F32, F16, and BF16
widened by putting its 16 bits in a float32's top half) and widened exactly to float64. Each
case's expected.json logits must be reproduced to 1e-12 before any beam is computed.

The search follows transformers >= 4.38: generation/beam_search.py (BeamSearchScorer.process and
finalize, BeamHypotheses.add and is_done) and generation/utils.py's _beam_search loop:
- The decoder sequence starts as the prefix: [decoder_start_token_id] for an encoder-decoder
  (decoder_prompt_len 1), the prompt's ids for a decoder-only model (decoder_prompt_len =
  len(prompt)). N beams hold it, beam_scores = [0, -1e9, ...].
- Each step, for each beam b: the last position's logits of a full forward over its whole
  sequence (no cache); logp = log_softmax over the vocabulary, THEN the bad_words_ids (single
  tokens) set to -inf (NoBadWordsLogitsProcessor runs after the log_softmax: no renormalising);
  scores[b] = logp + beam_scores[b]. Flattened beam-major (b * V + token), the best
  K = max(2, 1 + number of eos ids) * N are kept (2N with one eos id; 3N for llama_f32's two),
  by score descending, ties to the lower flat index: a stable sort of -score. (torch.topk does
  not document its ties. The one tie here: marian_f32 N = 8, step 1's 16th candidate,
  -1e9 + logp[8] on beams 1-7 alike; the stable sort takes beam 1, torch.topk on one CPU took
  beam 5. It is unused either way.)
- The candidates in that order, beam_idx = 0: an eos id ranked >= N is skipped; ranked < N it
  finishes a hypothesis (the beam's tokens without the eos, sum_logprobs = its score,
  generated_len = cur_len - decoder_prompt_len, cur_len = the sequence's length + 1); any other
  token becomes beam beam_idx (its score, its token, its source beam), beam_idx += 1; the scan
  stops when beam_idx == N (the candidates after are "unused").
- BeamHypotheses.add: score = sum_logprobs / generated_len ** length_penalty; kept if fewer than N
  or score > worst_score (1e9 at first); above N the lowest (sorted [(score, index)], its first)
  is deleted and worst_score = the second's score; else worst_score = min(score, worst_score).
- is_done(best = the largest kept candidate score, cur_len): False below N hypotheses; else
  early_stopping True: True; False: worst_score >= best / (cur_len - decoder_prompt_len) ** lp;
  "never": the same with max_length in place of cur_len when lp > 0. Once done, always done.
- The loop ends once done, or when the sequences reach max_length = len(prefix) + max_new_tokens.
  finalize: unless done, every open beam is added (its whole sequence, its beam score,
  generated_len = its length - decoder_prompt_len); the result is sorted(beams, key=score).pop()
  (equal scores: the last added wins), then the first eos id appended when it is shorter than
  max_length (sequence_max_len = min(its length + 1, max_length), one sequence returned).
Nothing else of generate() is applied: the checkpoints' forced_eos_token_id
(ForcedEOSTokenLogitsProcessor), min_length and the like are left out.

Non-finite scores are written as "-inf" (torch_common.number). Run with Debian's python3-torch:
    /usr/bin/python3 tests/reference/make_beam_cases.py
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_common import number, out_dir, write_json  # noqa: E402
from hf_seq2seq import seq2seq_forward  # noqa: E402
from make_hf_checkpoints import gpt2_forward, llama_forward  # noqa: E402

OUT = out_dir("beam_search")
WIDTH = {"F64": "<f8", "F32": "<f4", "F16": "<f2"}


def read_safetensors(path):
    """{name: float64 tensor} for every F64, F32, F16 or BF16 tensor of the file (others skipped)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header, base, out = json.loads(raw[8:8 + n]), 8 + n, {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        data = raw[base + begin:base + end]
        if t["dtype"] == "BF16":
            bits = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
            values = bits.view(np.float32).astype(np.float64)
        elif t["dtype"] in WIDTH:
            values = np.frombuffer(data, dtype=WIDTH[t["dtype"]]).astype(np.float64)
        else:
            continue
        out[name] = torch.from_numpy(values.reshape(t["shape"]).copy())
    return out


def read_json(*parts):
    with open(os.path.join(HERE, *parts)) as f:
        return json.load(f)


def load_model(case):
    """(config, eos ids, bad word ids, run(src, ids) -> logits (T, V), the logits check's worst
    difference). case: "hf_seq2seq/<name>" or "hf_checkpoints/<name>"."""
    c = read_json(case, "config.json")
    w = read_safetensors(os.path.join(HERE, case, "model.safetensors"))
    arch = c["architectures"][0]
    eos = c["eos_token_id"]
    if os.path.exists(os.path.join(HERE, case, "generation_config.json")):
        eos = read_json(case, "generation_config.json").get("eos_token_id", eos)  # generate() reads it first
    eos = eos if isinstance(eos, list) else [eos]
    bad = [words[0] for words in c.get("bad_words_ids") or []]
    assert all(len(words) == 1 for words in c.get("bad_words_ids") or [])
    expected = read_json(case, "expected.json")
    if c.get("is_encoder_decoder"):
        def run(src, ids):
            return seq2seq_forward(c, w, arch, torch.tensor(src), torch.tensor(ids))[0]
        logits = run(expected["source"], expected["decoder_input"])
    else:
        prefix = "transformer." if any(k.startswith("transformer.") for k in w) else ""

        def run(src, ids):
            if arch == "GPT2LMHeadModel":
                return gpt2_forward(c, w, torch.tensor(ids), prefix)[0]
            return llama_forward(c, w, torch.tensor(ids), arch)[0]
        logits = run(None, expected["ids"])
    if "logits" in expected:
        worst = float((logits - torch.tensor(expected["logits"], dtype=torch.float64)).abs().max())
    else:  # V = 50257: expected.json keeps each position's largest logits
        worst = max(float((row[torch.tensor(top["ids"])] - torch.tensor(top["logits"])).abs().max())
                    for row, top in zip(logits, expected["top_logits"]))
    assert worst <= 1e-12, f"{case}: the logits differ from expected.json by {worst}"
    return c, eos, bad, run, worst


class Hypotheses:
    """BeamHypotheses: the finished hypotheses, at most N, and the worst kept score."""

    def __init__(self, n, length_penalty, early_stopping, max_length):
        self.n, self.lp, self.es, self.max_length = n, length_penalty, early_stopping, max_length
        self.beams, self.worst = [], 1e9  # [(score, tokens)]

    def add(self, tokens, sum_logprobs, generated_len):
        score = sum_logprobs / (generated_len ** self.lp)
        if len(self.beams) < self.n or score > self.worst:
            self.beams.append((score, tokens))
            if len(self.beams) > self.n:
                ranked = sorted([(s, i) for i, (s, _) in enumerate(self.beams)])
                del self.beams[ranked[0][1]]
                self.worst = ranked[1][0]
            else:
                self.worst = min(score, self.worst)
        return score

    def is_done(self, best, cur_len, prompt_len):
        if len(self.beams) < self.n:
            return False
        if self.es is True:
            return True
        if self.es is False or self.lp <= 0.0:
            return self.worst >= best / (cur_len - prompt_len) ** self.lp
        assert self.max_length > prompt_len
        return self.worst >= best / (self.max_length - prompt_len) ** self.lp


def candidates(last_logits, beams, bad, k):
    """The k best (beam, token, score) over every beam's log_softmax (bad words -inf after it)
    plus its beam score: beam-major flat order, a stable sort of -score."""
    rows = []
    for tokens, score in beams:
        logp = torch.log_softmax(last_logits(tokens), -1)
        logp[bad] = -float("inf")
        rows.append(logp + score)
    flat = torch.stack(rows).reshape(-1).numpy()
    V = rows[0].shape[0]
    order = np.argsort(-flat, kind="stable")[:k]
    return [(int(i) // V, int(i) % V, float(flat[i])) for i in order]


def beam_step(cands, beams, hyps, eos, prompt_len):
    """BeamSearchScorer.process on one step's candidates: (step record, the next beams)."""
    n, cur_len = len(beams), len(beams[0][0]) + 1
    fate, finished, following = [], [], []
    for rank, (b, token, score) in enumerate(cands):
        if len(following) == n:
            fate.append("unused")
        elif token in eos and rank >= n:
            fate.append("skipped")
        elif token in eos:
            tokens, gen = list(beams[b][0]), cur_len - prompt_len
            finished.append({"tokens": tokens, "sum": number(score), "generated_len": gen,
                             "score": number(hyps.add(tokens, score, gen))})
            fate.append("finished")
        else:
            fate.append(f"beam {len(following)}")
            following.append((beams[b][0] + [token], score))
    assert len(following) == n, "fewer than N beams left for the next step"
    step = {"candidates": [{"beam": b, "token": t, "score": number(s)} for b, t, s in cands], "fate": fate,
            "beams": [{"tokens": t, "score": number(s)} for t, s in following], "finished": finished}
    return step, following


def beam_search(run, src, prefix, n, lp, es, max_new_tokens, eos, bad):
    """_beam_search with BeamSearchScorer for one sequence: (steps, hypotheses, result)."""
    cache = {}

    def last_logits(tokens):
        key = tuple(tokens)
        if key not in cache:
            cache[key] = run(src, tokens)[-1]
        return cache[key]

    max_length, prompt_len = len(prefix) + max_new_tokens, len(prefix)
    hyps = Hypotheses(n, lp, es, max_length)
    beams = [(list(prefix), 0.0 if b == 0 else -1e9) for b in range(n)]
    k = max(2, 1 + len(eos)) * n
    steps, done = [], False
    while not done and len(beams[0][0]) < max_length:
        cands = candidates(last_logits, beams, bad, k)
        step, beams = beam_step(cands, beams, hyps, eos, prompt_len)
        done = done or hyps.is_done(cands[0][2], len(beams[0][0]), prompt_len)
        step["done"] = done
        steps.append(step)
    if not done:
        for tokens, score in beams:
            hyps.add(tokens, score, len(tokens) - prompt_len)
    ranked = sorted(hyps.beams, key=lambda h: h[0])  # stable: equal scores keep their order
    hypotheses = [{"tokens": t, "score": number(s)} for s, t in reversed(ranked)]
    score, best = ranked.pop()
    tokens = best + [eos[0]] if len(best) < max_length else best  # sequence_max_len = min(len + 1, max_length)
    return steps, hypotheses, {"tokens": tokens, "score": number(score)}


# (case, beams, length_penalty, early_stopping, max_new_tokens, source or prompt, note)
SOURCE = [3, 9, 4, 12, 0]  # hf_seq2seq.py's SOURCE, each seq2seq case's expected.json "source"
PROMPT = [3, 14, 1]  # make_hf_checkpoints.py's PROMPT, each decoder case's expected.json "prompt"
RUNS = [
    ("hf_seq2seq/marian_f32", 3, 1.0, False, 6, SOURCE,
     "three beams to max_length; step 1's eos (rank 2) finishes the empty hypothesis [15]"),
    ("hf_seq2seq/marian_f32", 8, 1.0, False, 3, SOURCE,
     "N = 8 with V = 16: step 1's 16th candidate comes from a -1e9 beam (unused; bad word 15's -inf not reached)"),
    ("hf_seq2seq/bart_f32", 2, 2.0, True, 6, SOURCE,
     "early_stopping True: done at step 2 with 2 hypotheses; the result [2, 13] ends by eos"),
    ("hf_seq2seq/marian_f64_untied", 4, -0.5, "never", 6, SOURCE,
     "a negative length_penalty with early_stopping \"never\" (cur_len in the bound); no eos"),
    ("hf_seq2seq/bart_bf16_scaled", 3, 1.0, False, 6, SOURCE, "BF16 weights; no eos"),
    ("hf_checkpoints/gpt2_f32", 3, 1.0, False, 5, PROMPT,
     "decoder-only, the prompt as prefix: eos finishes 4 hypotheses (ranks 2, 0, 2, 2); "
     "the result [3, 14, 1, 2] ends by eos"),
    ("hf_seq2seq/bart_f32", 3, 1.0, False, 6, SOURCE,
     "eos ranked >= N skipped at steps 2-6 (twice at steps 4 and 6); full hypotheses evict their worst"),
    ("hf_seq2seq/marian_f32", 2, 1.0, False, 6, [12, 2, 14, 11, 0],
     "eos skipped at rank 2 in steps 3 and 4; the result [15, 1] ends by eos"),
    ("hf_seq2seq/marian_f32", 4, 0.5, False, 6, [9, 3, 5, 3, 0],
     "early_stopping False: the heuristic ends the search at step 4; the result [15] is eos at once"),
    ("hf_checkpoints/llama_f32", 4, 0.5, False, 5, PROMPT,
     "generation_config.json's eos [2, 5]: 3N candidates; step 1 finishes by 2 (rank 3) and skips 5 (rank 4); "
     "the best hypothesis finished by 5, and eos_token_id[0] = 2 is appended"),
    ("hf_seq2seq/bart_f32", 2, 1.0, "never", 6, [12, 11, 4, 13, 2],
     "early_stopping \"never\" with length_penalty > 0 (max_length in the bound); the empty hypothesis [2] wins"),
    ("hf_seq2seq/bart_gpt2_tokenizer_f16", 3, 1.0, False, 5, None,
     "GPT-2's real tokenizer beside BART (V = 50257): expected.json's source, the ids of \"The cat sat on the mat\"; "
     "tests/cli/beam_reference.py runs it from the text through attn generate --json"),
]


def make_run(models, spec):
    case, n, lp, es, new, ids, note = spec
    if case not in models:
        models[case] = load_model(case)
        print(f"{case}: logits within {models[case][4]:.1e} of expected.json")
    c, eos, bad, run, _ = models[case]
    ids = read_json(case, "expected.json")["source"] if ids is None else ids
    seq2seq = bool(c.get("is_encoder_decoder"))
    prefix = [c["decoder_start_token_id"]] if seq2seq else list(ids)
    steps, hypotheses, result = beam_search(run, ids if seq2seq else None, prefix, n, lp, es, new, eos, bad)
    out = {"case": case, "kind": "seq2seq" if seq2seq else "decoder"}
    if seq2seq:
        out["source"] = list(ids)
    out.update({"prefix": prefix, "beams": n, "length_penalty": lp, "early_stopping": es, "max_new_tokens": new,
                "eos": eos, "bad_words": bad, "note": note, "steps": steps, "hypotheses": hypotheses,
                "result": result})
    return out


def summary(r):
    fates = [f for s in r["steps"] for f in s["fate"]]
    return (f"{r['case']} N={r['beams']} lp={r['length_penalty']} es={r['early_stopping']} "
            f"M={r['max_new_tokens']}: {len(r['steps'])} steps, finished {fates.count('finished')}, "
            f"skipped {fates.count('skipped')}, done {r['steps'][-1]['done']}, result {r['result']['tokens']} "
            f"{r['result']['score']}")


def main():
    torch.set_grad_enabled(False)
    models, runs = {}, []
    for spec in RUNS:
        runs.append(make_run(models, spec))
        print(summary(runs[-1]))
    os.makedirs(OUT, exist_ok=True)
    write_json(os.path.join(OUT, "cases.json"), {"runs": runs}, indent=1)


if __name__ == "__main__":
    main()
