#!/usr/bin/env python3
"""Writes data/examples/untrained_i_love_ai.json: attn's built-in model until the trained
translator replaced it, kept as a bundled example because its inputs are round numbers a
learner can follow by hand (docs/steps/ works with it).

Seed 004's "I love AI" walkthrough at its own size: d_model 4, 2 heads, d_ff 8, one encoder
layer and one decoder layer, sinusoidal positions, the output tied to the embedding.
The vocabulary starts as seed 004's does (<PAD> 0, <UNK> 1, I 2, love 3, AI 4, you 5, with its
embedding rows), then <BOS>/<EOS>, common English words and a few French ones for the
decoder's "J' aime l' IA". The other embedding rows are np.random.seed(2024) normal values
scaled by 0.5 and rounded to 2 decimals, so that a learner can read them. W_q of the encoder
is seed 004's; every other weight is "randn", drawn by attn from np.random.seed(0) in the
documented order, so a NumPy notebook can reproduce them.

Run: /usr/bin/python3 data/make_untrained_i_love_ai.py  (then rebuild: the JSON is compiled in)
"""
import json
import os

import numpy as np

SEED004 = [
    ("<PAD>", [0.00, 0.00, 0.00, 0.00]),
    ("<UNK>", [0.12, 0.34, 0.56, 0.78]),
    ("I", [0.10, 0.20, 0.30, 0.40]),
    ("love", [0.50, 0.10, 0.80, 0.20]),
    ("AI", [0.90, 0.70, 0.20, 0.10]),
    ("you", [0.15, 0.25, 0.35, 0.45]),
]
SPECIAL = ["<BOS>", "<EOS>"]
PUNCTUATION = [".", ",", "?", "!", "'", ";", ":", "-", "(", ")", "\""]
ENGLISH = """the a an and or but not no yes is are was were be been being am do does did have has had
will would can could shall should may might must it its this that these those he she we they me him her us
them my your his our their what who whom which when where why how all any some every each many much more most
few other such only own same so than too very just also now then here there up down in out on off over under
of to from by with about into through during before after above below between again once at for as if
because while until like hello hi goodbye thanks thank please sorry good bad great small big new old first
last long little high low right left young important different large few public able man woman child children
people person friend family mother father brother sister dog cat bird fish tree house home school work job
world country city time day night year week today tomorrow yesterday morning evening life way thing word
sentence language book story music food water coffee tea bread apple car road computer machine learning
model data attention transformer network neural token vector matrix head query key value number love like
hate want need know think see look hear feel make go come take give get find tell ask use try call keep
let begin help talk turn start show play run move live believe bring write read learn understand speak say
eat drink sleep walk sit stand open close happy sad beautiful nice fast slow hot cold easy hard true false
one two three four five six seven eight nine ten hundred thousand red blue green black white""".split()
FRENCH = ["J'", "aime", "l'", "IA", "je", "tu", "il", "elle", "nous", "vous", "ils", "le", "la", "les", "un",
          "une", "et", "est", "bonjour", "merci", "monde", "chat", "chien", "apprentissage"]


def main():
    vocab = [t for t, _ in SEED004]
    for word in SPECIAL + PUNCTUATION + ENGLISH + FRENCH:
        if word not in vocab and word.lower() not in [v.lower() for v in vocab]:
            vocab.append(word)
    rng = np.random.RandomState(2024)
    rows = [row for _, row in SEED004]
    rows += (rng.randn(len(vocab) - len(SEED004), 4) * 0.5).round(2).tolist()
    model = {
        "comment": "Untrained (made by data/make_untrained_i_love_ai.py; attn's built-in model before "
                   "the trained translator): seed 004's 'I love AI' at "
                   "d_model 4, 2 heads, d_ff 8, one encoder and one decoder layer.",
        "model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "activation": "relu", "norm_first": False,
                  "layer_norm_eps": 1e-5, "positional_encoding": "sinusoidal", "scale_embeddings": False,
                  "seed": 0},
        "vocab": vocab,
        "embedding": rows,
        "input": {"text": "I love AI"},
        "encoder": [{
            "attention": {
                "comment": "W_q is seed 004's; the rest are drawn from np.random.seed(0)",
                "W_q": [[0.1, 0.2, 0.3, 0.4], [0.5, 0.1, 0.2, 0.3], [0.2, 0.3, 0.1, 0.5], [0.4, 0.2, 0.5, 0.1]],
                "W_k": "randn", "W_v": "randn", "W_o": "randn"},
            "norm1": {"gamma": "ones", "beta": "zeros"},
            "ffn": {"W_1": "randn", "b_1": "zeros", "W_2": "randn", "b_2": "zeros"},
            "norm2": {"gamma": "ones", "beta": "zeros"},
        }],
        "decoder": [{
            "self_attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
            "norm1": {"gamma": "ones", "beta": "zeros"},
            "cross_attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
            "norm2": {"gamma": "ones", "beta": "zeros"},
            "ffn": {"W_1": "randn", "b_1": "zeros", "W_2": "randn", "b_2": "zeros"},
            "norm3": {"gamma": "ones", "beta": "zeros"},
        }],
        "output": "tied",
    }
    lines = ["{"]
    items = list(model.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i + 1 < len(items) else ""
        if key == "vocab":
            text = "[\n    " + ",\n    ".join(", ".join(json.dumps(w, ensure_ascii=False) for w in vocab[j:j + 12])
                                               for j in range(0, len(vocab), 12)) + "\n  ]"
        elif key == "embedding":
            text = "[\n    " + ",\n    ".join(json.dumps(r) + "  " * 0 for r in rows) + "\n  ]"
        elif key in ("encoder", "decoder"):
            text = json.dumps(value, indent=2).replace("\n", "\n  ")
        else:
            text = json.dumps(value)
        lines.append(f"  {json.dumps(key)}: {text}{comma}")
    lines.append("}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "untrained_i_love_ai.json")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{path}: {len(vocab)} tokens")


if __name__ == "__main__":
    main()
