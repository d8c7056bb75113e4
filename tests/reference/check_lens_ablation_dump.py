"""NumPy recomputes the logit lens and ablation from the dumps attn writes (CTest:
reference.lens_ablation_numpy):
    /usr/bin/python3 tests/reference/check_lens_ablation_dump.py ATTN WORK_DIR
Needs NumPy (Debian's python3-numpy; CMake registers the test only when /usr/bin/python3 has it).

- the induction model with --ablate 0.1 --lens: context_ablated is the context with head 1's
  rows zero, the merge reads it, every lens.<l>.logits is that layer's output times Eᵀ, and
  the whole ablated run's probabilities equal make_ablation_cases.py's forward pass;
- the same with --ablate-mean: head 1's rows are its mean over the positions;
- the induction lesson (attn explain --example induction): every head's scores and every
  ablation's copies, as its tables print them, equal those of NumPy's forward pass of the
  model file's own sequence (docs/heads.md's definitions);
- gpt_tiny (pre-norm, a final LayerNorm) with --lens: lens.<l>.norm is the final norm of
  decoder.<l>.output, its logits times Eᵀ, and the last layer's lens is output.logits itself.
"""
import json
import os
import re
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_ablation_cases as ref  # noqa: E402

ATTN, WORK = sys.argv[1], sys.argv[2]
EXAMPLES = os.path.join(HERE, "..", "..", "data", "examples")


def dump(name, *args):
    path = os.path.join(WORK, name)
    subprocess.run([ATTN, "explain", *args, "--quiet", "--dump", path], check=True, stdin=subprocess.DEVNULL)
    return np.load(path)


def model_file(name):
    with open(os.path.join(EXAMPLES, name + ".json")) as f:
        return json.load(f)


class LensAblationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.induction = model_file("trained_induction")
        cls.E = np.array(cls.induction["embedding"], dtype=np.float64)

    def check_ablated(self, trace, mean):
        block = "decoder.0.self_attention."
        context, ablated = trace[block + "context"], trace[block + "context_ablated"]
        expected = context.copy()
        expected[1] = context[1].sum(axis=0) / context.shape[1] if mean else 0.0
        np.testing.assert_allclose(ablated, expected, rtol=0, atol=1e-15)
        self.assertTrue(np.array_equal(ablated[0], context[0]))
        S, d = context.shape[1], context.shape[2]
        self.assertTrue(np.array_equal(trace[block + "concat"], ablated.transpose(1, 0, 2).reshape(S, 2 * d)))
        self.assertNotIn("decoder.1.self_attention.context_ablated", trace.files)
        # everything after it: the whole forward pass, as NumPy computes it from the model file
        arrays = {"embedding": self.E, "decoder": ref.as_arrays(self.induction["decoder"])}
        lens = ref.forward(self.induction, arrays, [int(i) for i in trace["tokens.ids"]], [(0, 1)], mean)
        np.testing.assert_allclose(trace["output.probabilities"], lens[-1], rtol=0, atol=1e-12)
        for l in range(2):
            np.testing.assert_allclose(trace[f"lens.{l}.logits"], trace[f"decoder.{l}.output"] @ self.E.T, rtol=0,
                                       atol=1e-12)
            np.testing.assert_allclose(trace[f"lens.{l}.probabilities"], lens[l], rtol=0, atol=1e-12)
        self.assertTrue(np.array_equal(trace["lens.1.logits"], trace["output.logits"]))
        self.assertNotIn("lens.0.norm", trace.files)  # post-norm: no final norm

    def test_induction_ablated_zero(self):
        self.check_ablated(dump("zero.npz", "--example", "induction", "--lens", "--ablate", "0.1"), False)

    def test_induction_ablated_mean(self):
        self.check_ablated(dump("mean.npz", "--example", "induction", "--lens", "--ablate", "0.1", "--ablate-mean"),
                           True)

    def test_lens_through_the_final_norm(self):
        # gpt_tiny's weights are drawn from a seed ("randn"): the dump holds them as drawn
        m = model_file("gpt_tiny")
        trace = dump("gpt_tiny.npz", "--example", "gpt_tiny", "--lens")
        E, gamma, beta = trace["embedding"], trace["decoder_norm.gamma"], trace["decoder_norm.beta"]
        eps = m["model"].get("layer_norm_eps", 1e-5)
        for l in range(2):
            normed = ref.layer_norm(trace[f"decoder.{l}.output"], gamma, beta, eps)
            np.testing.assert_allclose(trace[f"lens.{l}.norm"], normed, rtol=0, atol=1e-12)
            np.testing.assert_allclose(trace[f"lens.{l}.logits"], trace[f"lens.{l}.norm"] @ E.T, rtol=0, atol=1e-12)
        self.assertTrue(np.array_equal(trace["lens.1.norm"], trace["decoder.norm"]))
        self.assertTrue(np.array_equal(trace["lens.1.logits"], trace["output.logits"]))
        self.assertTrue(np.array_equal(trace["lens.1.probabilities"], trace["output.probabilities"]))


def lesson_rows(text, caption):
    """The rows of the lesson's table under `caption`, each split into its cells."""
    lines = text[text.index(caption):].split("\n")[2:]  # the caption, then the header
    rows = []
    for line in lines:
        if not line.startswith("    ") or not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


class InductionLessonTest(unittest.TestCase):
    def test_lesson_numbers_equal_numpy(self):
        m = model_file("trained_induction")
        vocab = m["vocab"]
        ids = [vocab.index(t) for t in m["input"]["tokens"]]
        arrays = {"embedding": np.array(m["embedding"], dtype=np.float64), "decoder": ref.as_arrays(m["decoder"])}
        text = subprocess.run([ATTN, "explain", "--example", "induction", "--brief", "--color", "never",
                               "--linewidth", "300"], check=True, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True).stdout
        # the scores, from NumPy's weights and the definitions
        weights = []
        ref.forward(m, arrays, ids, [], False, weights)
        S = len(ids)
        earlier = [max([q for q in range(p) if ids[q] == ids[p]], default=None) for p in range(S)]
        rows = lesson_rows(text, "each head's scores on this sequence")
        self.assertEqual(len(rows), 4)
        for l, w in enumerate(weights):
            for h in range(2):
                prev = np.mean([w[h, p, p - 1] for p in range(1, S)])
                ind = np.mean([w[h, p, earlier[p] + 1] for p in range(S) if earlier[p] is not None])
                ind2 = np.mean([w[h, p, earlier[p] + 2] for p in range(S) if earlier[p] is not None and
                                earlier[p] + 2 <= p])
                first = np.mean([w[h, p, 0] for p in range(1, S)])
                expected = [f"layer {l} head {h}"] + [f"{v:.2f}" for v in (prev, ind, ind2, first)]
                self.assertEqual(rows[2 * l + h][:5], expected)
        # the copies: positions p + 1 < S whose token occurred before; the token to copy follows it
        targets = [(p, ids[earlier[p] + 1]) for p in range(1, S - 1) if earlier[p] is not None]
        never = [vocab.index(t) for t in ("<PAD>", "<UNK>", "<BOS>")]
        ablations = [[], [(0, 0)], [(0, 1)], [(1, 0)], [(1, 1)], [(0, 0), (0, 1)], [(1, 0), (1, 1)]]
        rows = lesson_rows(text, "each head ablated")
        self.assertEqual(len(rows), len(ablations))
        for row, ablation in zip(rows, ablations):
            p = ref.forward(m, arrays, ids, ablation, False)[-1]
            right = sum(ref.greedy(p[i], never) == want for (i, want) in targets)
            mean_p = np.mean([p[i, want] for (i, want) in targets])
            self.assertEqual(row[1:], [f"{right}/{len(targets)}", f"{mean_p:.4f}"], row[0])

    def test_generate_ablated_equals_numpy(self):
        # attn generate --ablate steps with the KV cache; NumPy runs the whole prefix again for
        # every token, with the same heads zeroed
        m = model_file("trained_induction")
        vocab = m["vocab"]
        arrays = {"embedding": np.array(m["embedding"], dtype=np.float64), "decoder": ref.as_arrays(m["decoder"])}
        prompt = ["<BOS>", "w", "g", "y", "o", "r", "v", "q", "w"]
        never = [vocab.index(t) for t in ("<PAD>", "<UNK>", "<BOS>")]
        continuations = {}
        for ablation in ([], [(0, 1)], [(1, 1)], [(1, 0), (1, 1)]):
            ids, out = [vocab.index(t) for t in prompt], []
            for _ in range(6):
                nxt = ref.greedy(ref.forward(m, arrays, ids, ablation, False)[-1][-1], never)
                ids.append(nxt)
                out.append(vocab[nxt])
                if vocab[nxt] == "<EOS>":
                    break
            spec = ["--ablate", ",".join(f"{l}.{h}" for (l, h) in ablation)] if ablation else []
            for cache in ([], ["--no-cache"]):
                text = subprocess.run([ATTN, "generate", "--example", "induction", " ".join(prompt), "-n", "6", "-q",
                                       *spec, *cache], check=True, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True).stdout.strip()
                self.assertEqual(text, " ".join(out), f"{spec} {cache}")
            continuations[str(ablation)] = out
        # the copy: unablated, the segment goes on; without the previous-token head it does not
        self.assertEqual(continuations["[]"], ["g", "y", "o", "r", "v", "q"])
        self.assertNotEqual(continuations["[(0, 1)]"], continuations["[]"])

    def test_grad_ablated_loss_equals_numpy(self):
        # attn grad --ablate: the loss is the ablated model's cross-entropy of the file's labels
        # (the mean over the labels that are not <PAD>), as NumPy's forward pass has it
        m = model_file("trained_induction")
        vocab = m["vocab"]
        arrays = {"embedding": np.array(m["embedding"], dtype=np.float64), "decoder": ref.as_arrays(m["decoder"])}
        ids = [vocab.index(t) for t in m["input"]["tokens"]]
        labels = [(i, vocab.index(t)) for i, t in enumerate(m["input"]["labels"]) if t != "<PAD>"]
        losses = {}
        os.makedirs(WORK, exist_ok=True)
        for name, ablation, mean, args in (("none", [], False, []), ("zero", [(0, 1)], False, ["--ablate", "0.1"]),
                                           ("mean", [(0, 1)], True, ["--ablate", "0.1", "--ablate-mean"])):
            path = os.path.join(WORK, f"grad_{name}.npz")
            subprocess.run([ATTN, "grad", "--example", "induction", *args, "--quiet", "--dump", path], check=True,
                           stdin=subprocess.DEVNULL)
            trace = np.load(path)
            p = ref.forward(m, arrays, ids, ablation, mean)[-1]
            expected = np.mean([-np.log(p[i, t]) for (i, t) in labels])
            self.assertAlmostEqual(float(trace["loss"]), expected, delta=1e-10)
            if ablation:
                self.assertIn("grad.decoder.0.self_attention.context_ablated", trace.files)
            losses[name] = expected
        self.assertGreater(losses["zero"], losses["none"] + 1)  # the copies fail: the loss rises


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
