#!/usr/bin/env python3
"""Writes make_checkpoint_folder.py's small GPT-2 with a pytorch_model.bin instead of its
model.safetensors, then makes the .bin hostile one way, for the CLI's hostile tests.

    make_hostile_bin.py OUT_DIR CASE CANARY

The vocabulary is 16 rows and the tokenizer a tokenizer.json of 16 one-character pieces
("a" ... "o", " "), so that a run takes milliseconds and the second the tests allow is the
.bin reader's.

The .bin is written byte by byte as torch.save writes one (torch/serialization.py): a zip
archive "pytorch_model/data.pkl" (protocol 2: OrderedDict(), then for each tensor
_rebuild_tensor_v2(persistent id ('storage', torch.FloatStorage, KEY, 'cpu', NUMEL), offset,
shape, stride, False, OrderedDict())), "pytorch_model/data/KEY" per storage and
"pytorch_model/version"; or the legacy format (five pickles, then each storage after its
element count). "good", "good_legacy" and "good_sharded" load and run; every other case
breaks one thing (CASES below). The attacks would create CANARY if their code ran. Only the
standard library: pickletools documents every opcode written here.
"""
import io
import json
import os
import pickle
import struct
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_checkpoint_folder as folder  # noqa: E402

QKV = "h.0.attn.c_attn.weight"
MAGIC = 0x1950a86a20f9469cfc6c


def unicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def integer(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if -2 ** 31 <= v < 2 ** 31:
        return b"J" + struct.pack("<i", v)
    n = (v.bit_length() + 8) // 8
    return b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)


def tup(*items):
    return b"(" + b"".join(items) + b"t"


ORDERED_DICT = glob("collections", "OrderedDict") + b")R"


def pid(storage_type, key, numel, legacy):
    items = [unicode("storage"), glob("torch", storage_type), unicode(key), unicode("cpu"), integer(numel)]
    return tup(*items, *([b"N"] if legacy else [])) + b"Q"


def rebuild(storage, offset, shape, stride):
    return glob("torch._utils", "_rebuild_tensor_v2") + tup(
        storage, integer(offset), tup(*map(integer, shape)), tup(*map(integer, stride)), b"\x89", ORDERED_DICT) + b"R"


def strides(shape):
    out, step = [], 1
    for d in reversed(shape):
        out.insert(0, step)
        step *= max(d, 1)
    return out


class Bin:
    """The state dict as torch.save would write it; each case changes a field first."""

    def __init__(self, legacy=False):
        self.legacy = legacy
        self.entries = []  # [name, storage type, key, numel, offset, shape, stride]
        self.storages = {}  # key -> raw bytes
        for i, (name, (_, shape, raw)) in enumerate(folder.good_tensors().items()):
            key = str(i)
            self.entries.append([name, "FloatStorage", key, len(raw) // 4, 0, list(shape), strides(shape)])
            self.storages[key] = raw
        self.pickle = None  # a whole data.pkl instead of the state dict's

    def entry(self, name):
        return next(e for e in self.entries if e[0] == name)

    def state_dict_pickle(self):
        if self.pickle is not None:
            return self.pickle
        items = b"".join(unicode(name) + rebuild(pid(t, key, numel, self.legacy), offset, shape, stride)
                         for name, t, key, numel, offset, shape, stride in self.entries)
        return b"\x80\x02" + ORDERED_DICT + b"(" + items + b"u."

    def zip_bytes(self, byteorder=None, compress=zipfile.ZIP_STORED):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            z.writestr("pytorch_model/data.pkl", self.state_dict_pickle(), compress_type=compress)
            if byteorder:
                z.writestr("pytorch_model/byteorder", byteorder)
            for key, raw in self.storages.items():
                z.writestr(f"pytorch_model/data/{key}", raw)
            z.writestr("pytorch_model/version", "3\n")
        return out.getvalue()

    def legacy_bytes(self, counts=None):
        small = [pickle.dumps(MAGIC, protocol=2), pickle.dumps(1001, protocol=2),
                 pickle.dumps({"protocol_version": 1001, "little_endian": True,
                               "type_sizes": {"short": 2, "int": 4, "long": 4}}, protocol=2)]
        keys = list(self.storages)
        data = b"".join(struct.pack("<q", (counts or {}).get(k, len(self.storages[k]) // 4)) + self.storages[k]
                        for k in keys)
        return b"".join(small) + self.state_dict_pickle() + pickle.dumps(keys, protocol=2) + data


class Attack:
    """What pickle.dumps writes for an object whose __reduce__ names os.system."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def attack_pickles(canary):
    touch = f"touch {canary}"
    proto4 = b"\x80\x04"
    return {
        "global_os_system": b"\x80\x02" + glob("os", "system") + tup(unicode(touch)) + b"R.",
        "pickled_os_system": pickle.dumps(Attack(touch), protocol=2),
        "stack_global_popen": proto4 + unicode("subprocess") + unicode("Popen") + b"\x93" + tup(
            b"]" + b"(" + unicode("touch") + unicode(canary) + b"e") + b"R.",
        "builtins_eval": b"\x80\x02" + glob("builtins", "eval") + tup(unicode(f"open('{canary}', 'w')")) + b"R.",
        "builtins_exec": b"\x80\x02" + glob("builtins", "exec") + tup(unicode(f"open('{canary}', 'w')")) + b"R.",
        "getattr_reduce": b"\x80\x02" + glob("builtins", "getattr") + tup(glob("os", "system"), unicode("x")) + b"R.",
        "reduce_hostile_args": b"\x80\x02" + glob("torch._utils", "_rebuild_tensor_v2") + tup(unicode(touch)) + b"R.",
        "build_on_tensor": b"\x80\x02" + ORDERED_DICT + unicode(QKV) + rebuild(
            pid("FloatStorage", "4", 48, False), 0, [4, 12], [12, 1]) + b"}" + unicode("__setstate__") +
        unicode(touch) + b"sbs.",
        "newobj": b"\x80\x02" + glob("collections", "OrderedDict") + b")\x81.",
        "inst": b"\x80\x02(" + unicode(touch) + b"ios\nsystem\n.",
        "obj": b"\x80\x02(" + glob("collections", "OrderedDict") + b"o.",
        "deep_nesting": b"\x80\x02" + b"(" * 100000 + b".",
        "nested_tuples": b"\x80\x02N" + b"\x85" * 100000 + b".",
        "memo_flood": proto4 + b"N" + b"\x94" * 1100000 + b".",
        "repetition": b"\x80\x02Nq\x00(" + b"h\x00" * 1100000 + b"l.",
    }


def tensor_case(b, case):
    """The cases that change one tensor's persistent id, offset, shape or strides."""
    e = b.entry(QKV)  # [name, type, key, numel 48, offset, shape [4, 12], stride [12, 1]]
    if case == "missing_storage":
        e[2] = "99"
    elif case == "storage_past_data":
        b.storages[e[2]] = b.storages[e[2]][:100]
    elif case == "storage_10gb":
        e[3] = 10 * 2 ** 30 // 4
    elif case == "offset_past_storage":
        e[4] = 48
    elif case == "negative_shape":
        e[5], e[6] = [-4, 12], [12, 1]
    elif case == "huge_shape":
        e[5], e[6] = [2 ** 40, 2 ** 40], [2 ** 40, 1]
    elif case == "shape_vs_storage":
        e[5], e[6] = [4, 13], [13, 1]
    elif case == "noncontiguous":
        e[6] = [1, 4]
    elif case == "negative_stride":
        e[6] = [-12, 1]
    elif case == "huge_stride":
        e[6] = [2 ** 62, 1]
    elif case == "integer_dtype":  # 48 int64 numbers where the weight should be
        e[1] = "LongStorage"
        b.storages[e[2]] *= 2
    elif case == "unknown_dtype":
        e[1] = "ComplexFloatStorage"
    else:
        return False
    return True


def bin_content(case, canary):
    if case in ("good_legacy", "legacy_truncated", "legacy_count", "legacy_storage_10gb"):
        b = Bin(legacy=True)
        if case == "legacy_storage_10gb":
            b.entry(QKV)[3] = 10 * 2 ** 30 // 4
            return b.legacy_bytes(counts={b.entry(QKV)[2]: 10 * 2 ** 30 // 4})
        content = b.legacy_bytes(counts={b.entry(QKV)[2]: 47} if case == "legacy_count" else None)
        return content[:-10] if case == "legacy_truncated" else content
    b = Bin()
    attacks = attack_pickles(canary)
    if case in attacks:
        b.pickle = attacks[case]
    elif case == "truncated_zip":
        return b.zip_bytes()[:-200]
    elif case == "compressed_entry":
        return b.zip_bytes(compress=zipfile.ZIP_DEFLATED)
    elif case == "byteorder_big":
        return b.zip_bytes(byteorder="big")
    elif case == "zip_dotdot":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("pytorch_model/data.pkl", b.state_dict_pickle())
            z.writestr(f"pytorch_model/../../{os.path.basename(canary)}", b"x")
        return out.getvalue()
    elif case != "good" and not tensor_case(b, case):
        sys.exit(f"unknown case {case}")
    return b.zip_bytes()


TOKENIZER = {"added_tokens": [], "normalizer": None, "pre_tokenizer": None, "decoder": None, "post_processor": None,
             "model": {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False, "byte_fallback": False,
                       "vocab": {c: i for i, c in enumerate("abcdefghijklmno ")}, "merges": []}}


def config():
    """make_checkpoint_folder.py's, over 16 rows: " " (15) is the end of text."""
    return dict(folder.config(), vocab_size=folder.VOCAB, bos_token_id=15, eos_token_id=15)


def build(out, case, canary):
    folder.VOCAB = len(TOKENIZER["model"]["vocab"])
    folder.build(out, "", "no_tokenizer")  # config.json and model.safetensors
    folder.write(os.path.join(out, "tokenizer.json"), json.dumps(TOKENIZER))
    folder.write(os.path.join(out, "config.json"), json.dumps(config(), indent=2))
    os.remove(os.path.join(out, "model.safetensors"))
    if case in ("good_sharded", "sharded_missing_shard"):
        b = Bin()
        names = [e[0] for e in b.entries]
        weight_map = {}
        for k, part in enumerate((names[:8], names[8:])):
            shard = Bin()
            shard.entries = [e for e in shard.entries if e[0] in part]
            shard.storages = {e[2]: shard.storages[e[2]] for e in shard.entries}
            file = f"pytorch_model-0000{k + 1}-of-00002.bin"
            if not (case == "sharded_missing_shard" and k == 1):
                folder.write(os.path.join(out, file), shard.zip_bytes())
            weight_map.update({n: file for n in part})
        folder.write(os.path.join(out, "pytorch_model.bin.index.json"),
                     json.dumps({"metadata": {}, "weight_map": weight_map}))
        return
    folder.write(os.path.join(out, "pytorch_model.bin"), bin_content(case, canary))


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], sys.argv[3])
