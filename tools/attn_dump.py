"""Load an attn dump, JSON or .npz, into named NumPy arrays with their axes and labels.

    import attn_dump
    trace = attn_dump.load("trace.npz")            # or "trace.json": the same result
    w = trace["encoder.0.attention.weights"]       # a Tensor
    w.data                                         # the np.ndarray, (H, S, S) here
    w.axes                                         # ('H', 'S', 'S')
    w.labels["S"]                                  # ['I', 'love', 'AI']: the tokens of the S axis
    trace.model["d_model"], trace.tokens, trace.warnings
    trace.parameters["encoder.0.ffn.W_1"]         # the model's weights, as Tensors too

A Dump is a dict from the tensors' names to Tensors, in the order attn computed them, with
the dump's model summary, tokens, warnings and parameters (the model's weights, a dict by
their model-file paths) as attributes. The arrays have the .npz's
types either way: int64 token ids, bool padding masks, float64 for everything else. A
JSON dump may spell -inf, inf and NaN as strings ("-Infinity", attn's default), as
Python's literals (--json-nonfinite literal) or as null (--json-nonfinite null: every
null becomes NaN, since the dump no longer says which value it was).

As a script, it lists a dump's tensors: python3 tools/attn_dump.py trace.npz

Needs NumPy only (Debian: python3-numpy). docs/dump-format.md describes both formats.
"""

import json
import sys
import zipfile

import numpy as np

__all__ = ["Dump", "Tensor", "load"]

META_ENTRY = "__meta__.json"


class Tensor:
    """One tensor of a dump: its values, the names of its axes, and their labels."""

    def __init__(self, name, data, axes, labels):
        self.name = name
        self.data = data
        self.axes = tuple(axes)
        # axis name -> labels of its positions: the token strings of S (the source) and T
        # (the target) when the run read text; a list per batch item in a batched run.
        self.labels = labels

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    def __array__(self, dtype=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def __repr__(self):
        sizes = ",".join(f"{a}={n}" for a, n in zip(self.axes, self.data.shape))
        return f"Tensor({self.name!r}, ({sizes}), {self.data.dtype})"


class Dump(dict):
    """The tensors of a dump by name, in the order computed, and what the dump says besides."""

    def __init__(self, meta, tensors, parameters):
        super().__init__((t.name, t) for t in tensors)
        self.parameters = {p.name: p for p in parameters}
        self.format = meta["format"]
        self.version = meta["version"]
        self.model = meta["model"]
        self.tokens = meta["tokens"]
        self.warnings = meta["warnings"]


def dtype_of(name):
    """The type attn gives a tensor in the .npz, by its name (docs/dump-format.md)."""
    if name.endswith(".ids"):
        return np.int64
    if name.endswith(".padding_mask"):
        return np.bool_
    return np.float64


def axis_labels(tokens):
    labels = {}
    if "source" in tokens:
        labels["S"] = tokens["source"]
    if "target" in tokens:
        labels["T"] = tokens["target"]
    return labels


def json_values(data, shape, dtype):
    # np.array(..., dtype=float) reads "-Infinity", "Infinity" and "NaN" as float() does,
    # and null as NaN; an empty list needs its shape given.
    values = np.array(data, dtype=np.float64).reshape(shape)
    return values if dtype is np.float64 else values.astype(dtype)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        document = json.load(f)  # Python's json also reads the unquoted -Infinity
    labels = axis_labels(document["tokens"])
    tensors = [
        Tensor(t["name"], json_values(t["data"], t["shape"], dtype_of(t["name"])), t["axes"], labels)
        for t in document["tensors"]
    ]
    parameters = [
        Tensor(p["name"], json_values(p["data"], p["shape"], np.float64), p["axes"], {})
        for p in document.get("parameters", [])
    ]
    return Dump(document, tensors, parameters)


def load_npz(path):
    with np.load(path) as archive:
        if META_ENTRY not in archive.files:
            raise ValueError(f"{path}: no {META_ENTRY} in the archive: not an .npz that attn wrote")
        meta = json.loads(archive[META_ENTRY])
        labels = axis_labels(meta["tokens"])
        def read(entries, labels):
            arrays = []
            for t in entries:
                data = archive[t["name"]]
                if list(data.shape) != t["shape"] or data.dtype != np.dtype(t["dtype"]):
                    raise ValueError(f"{path}: {t['name']} is {data.dtype} {data.shape}, its metadata says "
                                     f"{t['dtype']} {tuple(t['shape'])}")
                arrays.append(Tensor(t["name"], data, t["axes"], labels))
            return arrays
        tensors = read(meta["tensors"], labels)
        parameters = read(meta.get("parameters", []), {})
    return Dump(meta, tensors, parameters)


def load(path):
    """Loads the dump at `path`: .npz when it is a zip archive, JSON otherwise."""
    return load_npz(path) if zipfile.is_zipfile(path) else load_json(path)


def main(argv):
    if len(argv) != 2:
        print("usage: python3 attn_dump.py DUMP (a .json or .npz that attn explain --dump wrote)", file=sys.stderr)
        return 2
    dump = load(argv[1])
    print(f"{argv[1]}: {len(dump)} tensors, {len(dump.parameters)} parameters; model: {json.dumps(dump.model, sort_keys=True)}")
    for tensor in dump.values():
        sizes = ",".join(f"{a}={n}" for a, n in zip(tensor.axes, tensor.shape))
        print(f"  {tensor.name:<44} {str(tensor.dtype):<8} ({sizes})")
    for axis, labels in axis_labels(dump.tokens).items():
        print(f"  {axis}: {labels}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
