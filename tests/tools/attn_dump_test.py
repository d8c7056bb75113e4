"""Tests of tools/attn_dump.py against dumps the attn binary writes (CTest: tools.attn_dump).

    /usr/bin/python3 tests/tools/attn_dump_test.py ATTN WORK_DIR

Needs NumPy (Debian: python3-numpy; CI installs it, and CMake registers this test only
when /usr/bin/python3 can import numpy).
"""

import json
import os
import subprocess
import sys
import unittest

import numpy as np

ATTN, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import attn_dump  # noqa: E402


def dump(name, *args):
    """Runs attn explain ARGS --quiet --dump WORK/NAME and returns the path."""
    path = os.path.join(WORK, name)
    subprocess.run([ATTN, "explain", *args, "--quiet", "--dump", path], check=True, stdin=subprocess.DEVNULL)
    return path


def strict_json(path):
    """Parses like a browser's JSON.parse: NaN, Infinity and -Infinity are refused."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


class AttnDumpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        # A batch of two sentences, padded and causal: ids, a padding mask, -inf in the masks.
        cls.batch = ["--example", "padded_batch"]
        # The built-in model with a target: source and target tokens, an encoder and a decoder.
        cls.translation = ["--target", "<BOS> J' aime l' IA", "I love AI"]

    def assert_same(self, a, b, nan_for_nonfinite=False):
        self.assertEqual(list(a), list(b))
        self.assertEqual((a.model, a.tokens, a.warnings), (b.model, b.tokens, b.warnings))
        for name in a:
            x, y = a[name], b[name]
            self.assertEqual((x.axes, x.shape, x.dtype, x.labels), (y.axes, y.shape, y.dtype, y.labels), name)
            expected = np.where(np.isfinite(x.data), x.data, np.nan) if nan_for_nonfinite else x.data
            self.assertTrue(np.array_equal(expected, y.data, equal_nan=True), name)
        self.assertEqual(list(a.parameters), list(b.parameters))
        for name in a.parameters:
            x, y = a.parameters[name], b.parameters[name]
            self.assertEqual((x.axes, x.shape, x.dtype), (y.axes, y.shape, y.dtype), name)
            self.assertTrue(np.array_equal(x.data, y.data), name)

    def test_json_and_npz_load_the_same(self):
        for args in (self.batch, self.translation):
            npz = attn_dump.load(dump("same.npz", *args))
            self.assert_same(npz, attn_dump.load(dump("same.json", *args)))
            self.assert_same(npz, attn_dump.load(dump("literal.json", *args, "--json-nonfinite", "literal")))
            self.assert_same(npz, attn_dump.load(dump("null.json", *args, "--json-nonfinite", "null")),
                             nan_for_nonfinite=True)

    def test_types_axes_and_labels(self):
        trace = attn_dump.load(dump("batch.npz", *self.batch))
        ids, padding = trace["tokens.ids"], trace["tokens.padding_mask"]
        self.assertEqual((ids.dtype, ids.axes), (np.int64, ("B", "S")))
        np.testing.assert_array_equal(ids.data, [[2, 3, 4], [5, 6, 0]])
        self.assertEqual(padding.dtype, np.bool_)
        np.testing.assert_array_equal(padding.data, [[False, False, False], [False, False, True]])
        mask = trace["encoder.mask"]  # additive: 0 where a query may look, -inf where not
        self.assertEqual((mask.dtype, mask.axes), (np.float64, ("B", "S", "S")))
        self.assertEqual(mask.data[1, 0, 2], -np.inf)
        self.assertEqual(mask.labels["S"], [["I", "love", "AI"], ["you", "too", "<PAD>"]])
        weights = trace["encoder.0.attention.weights"]
        self.assertEqual(weights.axes, ("B", "H", "S", "S"))
        np.testing.assert_allclose(weights.data.sum(axis=-1), 1.0)
        self.assertEqual(trace.model["num_heads"], 2)
        self.assertEqual(np.asarray(weights).shape, (2, 2, 3, 3))

        trace = attn_dump.load(dump("translation.json", *self.translation))
        cross = trace["decoder.0.cross_attention.weights"]
        self.assertEqual(cross.axes, ("H", "T", "S"))
        self.assertEqual(cross.labels["T"], ["<BOS>", "J'", "aime", "l'", "IA"])
        self.assertEqual(cross.labels["S"], ["I", "love", "AI"])
        self.assertEqual(trace["target_tokens.ids"].dtype, np.int64)
        # The weights come too: the input times W_q is the dumped q (a post-norm layer).
        W_q = trace.parameters["encoder.0.attention.W_q"]
        self.assertEqual((W_q.dtype, W_q.shape), (np.float64, (trace.model["d_model"],) * 2))
        np.testing.assert_allclose(trace["input"].data @ W_q.data, trace["encoder.0.attention.q"].data,
                                   rtol=1e-12, atol=1e-12)

    def test_only_the_literal_form_is_refused_by_a_strict_parser(self):
        strict_json(dump("strict.json", *self.batch))
        strict_json(dump("strict_null.json", *self.batch, "--json-nonfinite", "null"))
        with self.assertRaises(ValueError):
            strict_json(dump("not_strict.json", *self.batch, "--json-nonfinite", "literal"))
        # and the string form reads back as -inf with NumPy alone
        document = strict_json(os.path.join(WORK, "strict.json"))
        mask = next(t for t in document["tensors"] if t["name"] == "encoder.mask")
        self.assertEqual(np.array(mask["data"], dtype=float)[1, 0, 2], -np.inf)

    def test_the_script_lists_a_dump(self):
        path = dump("listed.npz", *self.batch)
        script = os.path.join(os.path.dirname(attn_dump.__file__), "attn_dump.py")
        out = subprocess.run([sys.executable, script, path], check=True, capture_output=True, text=True).stdout
        self.assertIn("tokens.padding_mask                          bool     (B=2,S=3)", out)
        self.assertIn("S: [['I', 'love', 'AI'], ['you', 'too', '<PAD>']]", out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
