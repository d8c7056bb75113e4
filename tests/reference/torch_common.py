"""What the PyTorch reference scripts share (make_torch_mha_cases.py, make_torch_train_cases.py,
make_torch_generate_cases.py, make_torch_llama_generate_cases.py): the committed files'
number format, how a case's files and the case list are written, and the greedy loop the two
generation scripts run. It sets nothing of torch's (each script chooses its default dtype and
seeds), so importing it changes no number a script draws.
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# The generation cases' vocabulary, and the tokens attn never writes (<PAD>, <UNK>, <BOS>:
# their logits are left out of the greedy pick).
GENERATE_VOCAB = ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big",
                  "red", "."]
NEVER = [0, 1, 2]


def out_dir(name):
    """tests/reference/<name>, where a script writes its cases."""
    return os.path.join(HERE, name)


def number(x):
    """A float for JSON: itself, or "-inf", "inf", "nan", which JSON has no literal for."""
    if math.isfinite(x):
        return x
    return "-inf" if x < 0 else ("inf" if x > 0 else "nan")


def nested(t):
    """A tensor as nested lists of Python floats (repr: the shortest text that reads back)."""
    return t.detach().tolist()


def entry(name, t):
    """{"name", "shape", "data"}: a tensor flat in C order, non-finite values as strings."""
    return {"name": name, "shape": list(t.shape), "data": [number(x) for x in t.detach().reshape(-1).tolist()]}


def write_json(path, content, indent=None):
    """The document on one line (or indented), then a newline."""
    with open(path, "w") as f:
        json.dump(content, f, indent=indent)
        f.write("\n")


def write_case_list(folder, names):
    """cases.txt, the list the C++ tests read, when one script owns the folder."""
    with open(os.path.join(folder, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")


def add_to_case_list(folder, names):
    """cases.txt when scripts share the folder: the cases listed stay in their place, new ones
    are appended."""
    listed = os.path.join(folder, "cases.txt")
    known = []
    if os.path.exists(listed):
        with open(listed) as f:
            known = f.read().split()
    with open(listed, "w") as f:
        f.write("\n".join(known + [n for n in names if n not in known]) + "\n")


def greedy_steps(last_logits, ids, max_new_tokens, vocab=GENERATE_VOCAB):
    """Greedy generation as attn generate does it: the last position's logits over the prefix
    (last_logits(ids), a (V,) tensor), the tokens in NEVER left out, the argmax appended; stops
    after <EOS> or max_new_tokens. Returns the steps [{"logits", "id", "token"}]; ids grows."""
    steps = []
    for _ in range(max_new_tokens):
        logits = last_logits(ids)
        masked = logits.clone()
        masked[NEVER] = -math.inf
        token = int(masked.argmax())
        steps.append({"logits": logits.tolist(), "id": token, "token": vocab[token]})
        if vocab[token] == "<EOS>":
            break
        ids.append(token)
    return steps


def check_cached(cached, steps, prompt_length):
    """A KV cache's logits (one (V,) tensor per position) equal every step's to 1e-12 of the
    largest."""
    for i, s in enumerate(steps):
        expected = cached[prompt_length - 1 + i].new_tensor(s["logits"])
        diff = float((cached[prompt_length - 1 + i] - expected).abs().max())
        assert diff <= 1e-12 * float(expected.abs().max()), diff


def write_generate_cases(folder, made):
    """Each (doc, expected) pair as <case>.json and <case>.expected.json, its tokens printed, and
    the names added to cases.txt."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for doc, expected in made:
        name = expected["case"]
        write_json(os.path.join(folder, name + ".json"), doc)
        write_json(os.path.join(folder, name + ".expected.json"), expected)
        names.append(name)
        print(name, " ".join(s["token"] for s in expected["steps"]))
    add_to_case_list(folder, names)
