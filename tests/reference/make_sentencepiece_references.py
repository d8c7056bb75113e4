#!/usr/bin/python3
"""SentencePiece models and the ids the real library gives, for tests/tokenizers/.

Run with Debian's python3-sentencepiece (0.1.97, the Python binding of libsentencepiece):
    /usr/bin/python3 tests/reference/make_sentencepiece_references.py
Writes, under tests/reference/:
- sentencepiece/marian/{source,target}.spm: two tiny Unigram models trained here (the real
  format from the real library), vocab.json (MarianTokenizer's shared vocabulary: "</s>" 0,
  "<unk>" 1, the pieces of both models, two language codes, "<pad>" last; two source pieces
  left out on purpose, so that they become <unk>), tokenizer_config.json and a minimal
  config.json;
- sentencepiece/unigram/{plain,byte_fallback}.spm: two tiny Unigram models with the
  identity normalization, and tokenizer.json and byte_fallback.json (their pieces and scores
  as Unigram tokenizer.json files; make_tokenizer_references.mjs runs transformers.js on
  tokenizer.json);
- tokenizers/marian_source.json, marian_target.json: every text of tokenizer_corpus.mjs
  (and a few of Marian's own) encoded as transformers' MarianTokenizer (tokenization_marian.py,
  v4) encodes it: cut at the special tokens, a ">>xx<<" code opening a part kept as a token,
  the rest split by the side's .spm (sp.encode(out_type=str)), each piece looked up in
  vocab.json (<unk>'s id when missing), </s> appended; "decoded" is decode(ids,
  skip_special_tokens=True): the pieces joined by the side's .spm, stripped;
- sentencepiece/unigram/precompiled.json and tokenizers/precompiled.json: marian/source.spm
  as a tokenizer.json with its normalization table as a Precompiled normalizer, and for
  every corpus text the text sentencepiece normalized it into and its ids;
- tokenizers/unigram_words.json: for every word (text between spaces) of the corpus, the ids
  plain.spm and byte_fallback.spm give for it (the Viterbi segmentation, unknown characters
  fused, byte fallback), which attn's Unigram model must give for "▁" + word (words holding
  "▁" or a control, unknown or byte piece's spelling left out: see main()).
Deterministic: one training thread, no sampling; the same files every run.
"""
import base64
import io
import json
import os
import re
import subprocess

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))

ENGLISH = [
    "The cat sat on the mat.", "I love AI.", "Attention is all you need.", "Hello world, hello again!",
    "The quick brown fox jumps over the lazy dog.", "She sells sea shells by the sea shore.",
    "We translate sentences from English into French.", "It was the best of times, it was the worst of times.",
    "Transformers compute attention weights with a softmax.", "The year 1984 had 365 days; 2024 had 366.",
    "Where is the library? Here it is!", "Naive cooperation in the facade of a role.",
    "Can you see the mountains from your window?", "Learning to read takes time and patience.",
    "The children played in the garden until dark.", "Numbers like 3.14 and 42 appear in text.",
    "A small model learns small things.", "Please open the door, then close it again.",
]
FRENCH = [
    "Le chat est assis sur le tapis.", "J'aime l'IA.", "L'attention est tout ce dont vous avez besoin.",
    "Bonjour le monde, bonjour encore !", "Le rapide renard brun saute par-dessus le chien paresseux.",
    "Nous traduisons des phrases de l'anglais vers le français.", "C'était le meilleur des temps.",
    "Où est la bibliothèque ? La voici !", "Les enfants ont joué dans le jardin jusqu'à la nuit.",
    "Café au lait, s'il vous plaît.", "Mañana será otro día.", "Ça va très bien, merci.",
    "Les nombres comme 3,14 et 42 apparaissent dans le texte.", "Un petit modèle apprend de petites choses.",
    "Veuillez ouvrir la porte, puis la refermer.", "Apprendre à lire prend du temps et de la patience.",
]
MARIAN_TEXTS = [
    ">>fr<< Hello world", ">>de<< The cat", ">>xx<< unknown code", "no >>fr<< code at the start",
    ">>fr<< a >>de<< b", ">>fr<<", "Hello </s> world", "<unk>", "<pad>x", "a<unk>b</s>", ">> fr <<", ">>fr<",
    ">>fr<< x <<y", "x >>a\n<< b", ">>fr<<\n>>de<< c", ">>><<<", ">><<", ">>x<<>>y<<",
]


def train(sentences, vocab_size, **options):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, model_type="unigram",
                                   vocab_size=vocab_size, hard_vocab_limit=False, character_coverage=1.0,
                                   num_threads=1, shuffle_input_sentence=False, minloglevel=2, **options)
    return model.getvalue()


def corpus():
    script = ("import {corpus} from " + json.dumps(os.path.join(HERE, "tokenizer_corpus.mjs")) +
              "; process.stdout.write(JSON.stringify(corpus));")
    return json.loads(subprocess.run(["node", "--input-type=module", "-e", script], check=True,
                                     capture_output=True, text=True).stdout)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def write_cases(name, source, cases, **extra):
    doc = {"source": source, "add_special_tokens": True, **extra, "cases": cases}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("},{", "},\n{") + "\n"
    write(os.path.join(HERE, "tokenizers", name + ".json"), text)
    print(f"{name}: {len(cases)} texts")


def processor(model):
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model)
    return sp


def marian_vocab(source, target):
    """MarianTokenizer's vocab.json: both models' pieces, two source pieces left out."""
    vocab = {"</s>": 0, "<unk>": 1}
    left_out = [source.id_to_piece(i) for i in (20, 21)]
    for sp in (source, target):
        for i in range(sp.get_piece_size()):
            piece = sp.id_to_piece(i)
            if sp.is_control(i) or sp.is_unknown(i) or piece in vocab or piece in left_out:
                continue
            vocab[piece] = len(vocab)
    for code in (">>fr<<", ">>de<<"):
        vocab[code] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab, left_out


class Marian:
    """transformers' MarianTokenizer (tokenization_marian.py, v4) on one side's .spm."""
    language_code_re = re.compile(">>.+<<")

    def __init__(self, vocab, sp):
        self.vocab, self.sp = vocab, sp
        self.specials = ["</s>", "<unk>", "<pad>"]
        self.decoder = {i: p for p, i in vocab.items()}

    def split(self, text):  # the added-tokens trie: leftmost, then longest, special tokens
        parts, start, pos = [], 0, 0
        while pos < len(text):
            found = max((t for t in self.specials if text.startswith(t, pos)), key=len, default=None)
            if found is None:
                pos += 1
                continue
            parts += [text[start:pos], found]
            pos = start = pos + len(found)
        return [p for p in parts + [text[start:]] if p]

    def encode(self, text):
        ids = []
        for part in self.split(text):
            if part in self.specials:
                ids.append(self.vocab[part])
                continue
            match = self.language_code_re.match(part)
            pieces = ([match.group(0)] if match else []) + self.sp.encode(self.language_code_re.sub("", part),
                                                                          out_type=str)
            ids += [self.vocab.get(p, self.vocab["<unk>"]) for p in pieces]
        return ids + [self.vocab["</s>"]]

    def decode(self, ids):
        special_ids = {self.vocab[t] for t in self.specials}
        return self.sp.decode_pieces([self.decoder[i] for i in ids if i not in special_ids]).strip()


def proto_fields(message, number):
    """The payloads of the length-delimited fields `number` of a protobuf message."""
    found, pos = [], 0
    while pos < len(message):
        key, pos = varint(message, pos)
        if key & 7 == 0:
            _, pos = varint(message, pos)
        elif key & 7 in (1, 5):
            pos += 8 if key & 7 == 1 else 4
        else:
            length, pos = varint(message, pos)
            if key >> 3 == number:
                found.append(message[pos:pos + length])
            pos += length
    return found


def varint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def precompiled_tokenizer_json(model, sp):
    """A .spm with its normalization table as a Unigram tokenizer.json: the table as a
    Precompiled normalizer, then SentencePiece's remove_extra_whitespaces (Strip, runs of
    spaces to one), Metaspace; no added tokens, nothing appended."""
    charsmap = proto_fields(proto_fields(model, 3)[-1], 2)[-1]
    vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True, "prepend_scheme": "always",
                 "split": True}
    normalizers = [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")},
                   {"type": "Strip", "strip_left": True, "strip_right": True},
                   {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Sequence", "normalizers": normalizers}, "pre_tokenizer": metaspace,
            "post_processor": None, "decoder": metaspace,
            "model": {"type": "Unigram", "unk_id": sp.unk_id(), "vocab": vocab, "byte_fallback": False}}


def unigram_tokenizer_json(sp, byte_fallback):
    """A .spm as a Unigram tokenizer.json (T5's layout: NFKC, words split at whitespace,
    Metaspace, </s> appended)."""
    vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
    added = [{"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in range(3)]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True, "prepend_scheme": "always",
                 "split": True}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [], "special_tokens": {"</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": byte_fallback},
    }


def main():
    texts = corpus()
    folder = os.path.join(HERE, "sentencepiece")
    source_model = train(ENGLISH * 4, 160)
    target_model = train(FRENCH * 4, 160)
    source, target = processor(source_model), processor(target_model)
    vocab, left_out = marian_vocab(source, target)
    marian = os.path.join(folder, "marian")
    write(os.path.join(marian, "source.spm"), source_model)
    write(os.path.join(marian, "target.spm"), target_model)
    write(os.path.join(marian, "vocab.json"), json.dumps(vocab, ensure_ascii=False, indent=1) + "\n")
    write(os.path.join(marian, "tokenizer_config.json"), '{"source_lang": "en", "target_lang": "fr"}\n')
    write(os.path.join(marian, "config.json"), '{"architectures": ["MarianMTModel"], "model_type": "marian"}\n')
    version = "python3-sentencepiece " + spm.__version__
    for side, sp in (("source", source), ("target", target)):
        tokenizer = Marian(vocab, sp)
        cases = [{"text": t, "ids": tokenizer.encode(t), "decoded": tokenizer.decode(tokenizer.encode(t))}
                 for t in texts + MARIAN_TEXTS]
        write_cases("marian_" + side, f"{version}, MarianTokenizer's rules", cases, left_out=left_out)
    unigram = os.path.join(folder, "unigram")
    plain_model = train(ENGLISH * 4, 200, normalization_rule_name="identity")
    bytes_model = train(ENGLISH * 4, 400, normalization_rule_name="identity", byte_fallback=True)
    write(os.path.join(unigram, "plain.spm"), plain_model)
    write(os.path.join(unigram, "byte_fallback.spm"), bytes_model)
    plain, with_bytes = processor(plain_model), processor(bytes_model)
    write(os.path.join(unigram, "tokenizer.json"),
          json.dumps(unigram_tokenizer_json(plain, False), ensure_ascii=False, indent=1) + "\n")
    write(os.path.join(unigram, "byte_fallback.json"),
          json.dumps(unigram_tokenizer_json(with_bytes, True), ensure_ascii=False, indent=1) + "\n")
    # Left out: words holding "▁" (SentencePiece's normalizer takes it for a space; the
    # Metaspace pre-tokenizer does not prepend another to a word that starts with it) or the
    # spelling of a control, unknown or byte piece ("</s>", "<unk>", "<0xE2>": SentencePiece
    # never matches those in text, tokenizers' Unigram trie holds every piece, and a
    # tokenizer.json cuts the special ones out first as added tokens).
    unmatched = {sp.id_to_piece(i) for sp in (plain, with_bytes) for i in range(sp.get_piece_size())
                 if sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i)}
    words = sorted({w for t in texts for w in t.split(" ")
                    if w and "\u2581" not in w and not any(piece in w for piece in unmatched)})
    cases = [{"word": w, "plain": plain.encode(w), "byte_fallback": with_bytes.encode(w)} for w in words]
    doc = {"source": version, "cases": cases}
    write(os.path.join(HERE, "tokenizers", "unigram_words.json"),
          json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("},{", "},\n{") + "\n")
    print(f"unigram_words: {len(cases)} words")
    # precompiled: Marian's source.spm (nmt_nfkc's table) as a tokenizer.json; for every
    # corpus text, what sentencepiece's normalizer made of it (its pieces joined: the dummy
    # prefix and "▁" for each space included) and its ids. Left out, as for the words: texts
    # holding the spelling of a control or unknown piece ("</s>", "<unk>").
    write(os.path.join(unigram, "precompiled.json"),
          json.dumps(precompiled_tokenizer_json(source_model, source), ensure_ascii=False, indent=1) + "\n")
    unmatched = {source.id_to_piece(i) for i in range(source.get_piece_size())
                 if source.is_control(i) or source.is_unknown(i)}
    cases = [{"text": t, "normalized": "".join(source.encode(t, out_type=str)), "ids": source.encode(t)}
             for t in texts if not any(piece in t for piece in unmatched)]
    doc = {"source": version, "cases": cases}
    write(os.path.join(HERE, "tokenizers", "precompiled.json"),
          json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("},{", "},\n{") + "\n")
    print(f"precompiled: {len(cases)} texts")


if __name__ == "__main__":
    main()
