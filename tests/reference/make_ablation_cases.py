# Reference values for the ablation and logit-lens tests (tests/analysis/induction_model_test.cpp),
# made once with Debian's NumPy from the shipped model file alone:
#   /usr/bin/python3 tests/reference/make_ablation_cases.py > tests/reference/ablation_cases.json
# The forward pass of data/examples/trained_induction.json written out here from the model
# file's definitions (docs/model-file.md): embeddings times sqrt(d_model), RoPE on each head's
# queries and keys (pairs (i, i + d/2), angle position * theta^(-2i/d)), the causal mask, the
# softmax, the context, then ablation (docs/heads.md): the named heads' context rows set to
# zero, or to their mean over the positions; merge, W_o, post-norm residual LayerNorm, a ReLU
# feed-forward, the tied output head. The logit lens is each layer's output through the tied
# head (the model has no final norm).
#
# The sequences: for n = 0..19, np.random.seed(7)'s stream of np.random.permutation(26), the
# first L = 6 + n % 7 letters a-z as x1..xL, read as "<BOS> x1..xL x1..xL"; the copyable
# positions are those of the second copy that predict x2..xL (L - 1 per sequence, 157 in all).
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "data", "examples", "trained_induction.json")


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def rope(x, theta):
    # x (H,S,d): each (i, i + d/2) pair turned by position * theta^(-2i/d)
    H, S, d = x.shape
    half = d // 2
    inv_freq = 1.0 / theta ** (np.arange(half) * 2 / d)
    angle = np.arange(S)[:, None] * inv_freq[None, :]
    c, s = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention(x, w, H, theta, ablated, mean, weights_out=None):
    S, N = x.shape
    d = N // H
    heads = lambda m: m.reshape(S, H, d).transpose(1, 0, 2)  # (H,S,d)
    q = rope(heads(x @ w["W_q"]), theta)
    k = rope(heads(x @ w["W_k"]), theta)
    v = heads(x @ w["W_v"])
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
    scores = scores + np.triu(np.full((S, S), -np.inf), k=1)
    weights = softmax(scores)
    if weights_out is not None:
        weights_out.append(weights)  # (H,S,S)
    context = weights @ v
    for h in ablated:
        context[h] = context[h].sum(axis=0) / S if mean else 0.0
    return context.transpose(1, 0, 2).reshape(S, N) @ w["W_o"]


def forward(model, arrays, ids, ablation, mean, weights_out=None):
    cfg = model["model"]
    N, H, theta, eps = cfg["d_model"], cfg["num_heads"], cfg["rope_theta"], cfg["layer_norm_eps"]
    E = arrays["embedding"]
    x = E[ids] * np.sqrt(N)
    lens = []
    for l, layer in enumerate(arrays["decoder"]):
        heads = [h for (ll, h) in ablation if ll == l]
        x = layer_norm(x + attention(x, layer["self_attention"], H, theta, heads, mean, weights_out), layer["norm1"]["gamma"],
                       layer["norm1"]["beta"], eps)
        ffn = np.maximum(x @ layer["ffn"]["W_1"], 0) @ layer["ffn"]["W_2"]
        x = layer_norm(x + ffn, layer["norm2"]["gamma"], layer["norm2"]["beta"], eps)
        lens.append(softmax(x @ E.T))
    return lens  # the last is the model's output


def as_arrays(value):
    if isinstance(value, dict):
        return {k: as_arrays(v) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [as_arrays(v) for v in value]
    return np.array(value, dtype=np.float64)


def sequences(vocab):
    np.random.seed(7)
    out = []
    for n in range(20):
        order = np.random.permutation(26)
        x = [chr(ord("a") + int(i)) for i in order[: 6 + n % 7]]
        out.append([vocab.index(t) for t in ["<BOS>"] + x + x])
    return out


def greedy(p, never):
    p = p.copy()
    p[never] = -1
    return int(np.argmax(p))


def main():
    model = json.load(open(MODEL))
    vocab = model["vocab"]
    arrays = {"embedding": as_arrays(model["embedding"]), "decoder": as_arrays(model["decoder"])}
    never = [vocab.index(t) for t in ("<PAD>", "<UNK>", "<BOS>")]
    cases = []
    ablations = [[], [(0, 0)], [(0, 1)], [(1, 0)], [(1, 1)], [(1, 0), (1, 1)]]
    for mean in (False, True):
        for ablation in ablations:
            right, total, p_sum = 0, 0, 0.0
            for ids in sequences(vocab):
                L = (len(ids) - 1) // 2
                p = forward(model, arrays, ids, ablation, mean)[-1]
                for i in range(1, L):  # the second copy's x_i predicts x_{i+1}
                    pos, want = 1 + L + i - 1, ids[1 + i]
                    right += greedy(p[pos], never) == want
                    p_sum += p[pos, want]
                    total += 1
            cases.append({"heads": [[l, h] for (l, h) in ablation], "mean": mean, "positions": total,
                          "right": right, "mean_p": p_sum / total})
    # The lens of the first sequence, unablated: each position's top token per layer, and one logit.
    ids = sequences(vocab)[0]
    lens = forward(model, arrays, ids, [], False)
    top = [[vocab[greedy(layer[i], never)] for layer in lens] for i in range(len(ids))]
    E = arrays["embedding"]
    json.dump({"ablations": cases, "lens": {"sequence": [vocab[i] for i in ids], "top_tokens": top,
                                            "layer0_p_max_position_3": float(lens[0][3].max())}},
              fp=__import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
