"""pytorch_model.bin versions of some of make_hf_checkpoints.py's cases, written by torch.save.

Each case copies a safetensors case's config.json (and generation_config.json) and writes its
tensors, read back from its model.safetensors (or shards) with their dtypes, as the state
dict transformers' save_pretrained would hand torch.save: the same names in the same order,
and for a tied head "lm_head.weight" as the very tensor of the embeddings (one storage under
two names, as GPT2LMHeadModel.state_dict() gives it). The formats:
- "zip": torch.save's default since PyTorch 1.6;
- "legacy": _use_new_zipfile_serialization=False (the magic number, the protocol, sys_info,
  the state dict's pickle, the storage keys, then each storage after its element count);
- "sharded": pytorch_model-0000K-of-0000N.bin (zip) listed by pytorch_model.bin.index.json.
The numbers are the safetensors case's bit for bit, so attn must give the same logits from
either folder, and the case's expected.json holds for both. bin_cases.txt lists
"BIN_CASE SAFETENSORS_CASE" per line.

The legacy format keys each storage by its address in memory (str(storage._cdata)), so
those files differ from run to run in their keys alone; the zip files are the same every
time.
"""
import json
import math
import os
import shutil

import numpy as np
import torch

# (bin case, safetensors case, format, shards): F32, F16, BF16 and F64 storages; every
# family attn reads; a tied head stored once under two names (gpt2_*, llama_f16_tied,
# qwen2_f32, qwen3_f32).
BIN_CASES = [
    ("gpt2_f32_bin", "gpt2_f32", "zip", 1),
    ("gpt2_f16_prefixed_bin_legacy", "gpt2_f16_prefixed", "legacy", 1),
    ("gpt2_f64_bin_legacy", "gpt2_f64", "legacy", 1),
    ("gpt2_f32_untied_bin", "gpt2_f32_untied", "zip", 1),
    ("llama_f32_bin_sharded", "llama_f32", "zip", 3),
    ("llama_f16_tied_bin_legacy", "llama_f16_tied", "legacy", 1),
    ("llama_bf16_bin", "llama_bf16", "zip", 1),
    ("mistral_f32_bin", "mistral_f32", "zip", 1),
    ("qwen2_bf16_bin_legacy", "qwen2_bf16", "legacy", 1),
    ("qwen3_f32_bin", "qwen3_f32", "zip", 1),
    # issue 34's families (TinyStories and Pythia ship pytorch_model.bin): GPT-Neo's boolean
    # mask buffers and NeoX's inv_freq in the state dict as torch saves them
    ("gpt_neo_f32_bin", "gpt_neo_f32", "zip", 1),
    ("gpt_neo_f16_untied_bin_legacy", "gpt_neo_f16_untied", "legacy", 1),
    ("gpt_neox_f32_bin", "gpt_neox_f32", "zip", 1),
    ("gpt_neox_bf16_full_rotary_bin_legacy", "gpt_neox_bf16_full_rotary", "legacy", 1),
    ("gemma_f32_bin", "gemma_f32", "zip", 1),
    ("phi_f16_gqa_bin_sharded", "phi_f16_gqa", "zip", 2),
    ("mistral_window_f32_bin", "mistral_window_f32", "zip", 1),
]

TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}
NUMPY_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<i2", "F64": "<f8", "BOOL": "|b1"}


def read_safetensors(path):
    """{name: tensor of the stored dtype}, in the header's order."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = np.frombuffer(data[8 + n + begin:8 + n + end], dtype=NUMPY_DTYPES[entry["dtype"]]).copy()
        t = torch.from_numpy(raw.astype(raw.dtype.newbyteorder("=")))
        if entry["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        tensors[name] = t.reshape(entry["shape"])
    return tensors


def read_case(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(folder, "model.safetensors"))
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    tensors = {}
    for shard in dict.fromkeys(weight_map.values()):
        tensors.update(read_safetensors(os.path.join(folder, shard)))
    return {name: tensors[name] for name in weight_map}


def state_dict(tensors, config):
    """As the model's state_dict(): a tied head is the embeddings' own tensor, listed last."""
    sd = dict(tensors)
    tied_by_default = config["model_type"] in ("gpt2", "gpt_neo", "gemma")
    if config.get("tie_word_embeddings", tied_by_default):
        embeddings = next(k for k in ("transformer.wte.weight", "wte.weight", "model.embed_tokens.weight") if k in sd)
        sd["lm_head.weight"] = sd[embeddings]
    return sd


def save(sd, path, fmt):
    torch.save(sd, path, _use_new_zipfile_serialization=(fmt != "legacy"))


def save_sharded(sd, folder, shards):
    names = list(sd)
    per = math.ceil(len(names) / shards)
    weight_map, total = {}, 0
    for k in range(shards):
        file = f"pytorch_model-{k + 1:05d}-of-{shards:05d}.bin"
        part = {n: sd[n] for n in names[k * per:(k + 1) * per]}
        save(part, os.path.join(folder, file), "zip")
        for n, t in part.items():
            weight_map[n] = file
            total += t.numel() * t.element_size()
    with open(os.path.join(folder, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


def make_bin_cases(out):
    lines = []
    for name, source, fmt, shards in BIN_CASES:
        folder, origin = os.path.join(out, name), os.path.join(out, source)
        os.makedirs(folder)
        for extra in ("config.json", "generation_config.json"):
            if os.path.exists(os.path.join(origin, extra)):
                shutil.copy(os.path.join(origin, extra), folder)
        with open(os.path.join(origin, "config.json")) as f:
            config = json.load(f)
        sd = state_dict(read_case(origin), config)
        if shards > 1:
            save_sharded(sd, folder, shards)
        else:
            save(sd, os.path.join(folder, "pytorch_model.bin"), fmt)
        check_round_trip(folder, sd)
        lines.append(f"{name} {source}")
        print(f"{name}: {fmt}{f', {shards} shards' if shards > 1 else ''}, from {source}")
    with open(os.path.join(out, "bin_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def check_round_trip(folder, sd):
    """torch.load gives back every tensor bit for bit, tied ones sharing their storage."""
    loaded = {}
    for file in sorted(os.listdir(folder)):
        if file.endswith(".bin"):
            loaded.update(torch.load(os.path.join(folder, file)))
    assert list(loaded) == list(sd) or set(loaded) == set(sd), folder
    for n, t in sd.items():
        assert loaded[n].dtype == t.dtype and torch.equal(loaded[n], t), (folder, n)
    if "lm_head.weight" in sd and any(sd["lm_head.weight"] is t for k, t in sd.items() if k != "lm_head.weight"):
        tied = next(k for k, t in sd.items() if k != "lm_head.weight" and t is sd["lm_head.weight"])
        assert loaded["lm_head.weight"].data_ptr() == loaded[tied].data_ptr(), folder
