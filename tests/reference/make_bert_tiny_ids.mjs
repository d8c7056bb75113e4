// node make_bert_tiny_ids.mjs PACKAGES OUT: the ids of the sentences the BERT tests run, by
// @lenml/tokenizers@3.7.2 (transformers.js's tokenizers, an implementation no one here wrote),
// on the tokenizer.json BertTokenizerFast makes of bert_mlm_f32's vocab.txt (hf_bert.VOCAB)
// with do_lower_case: BertNormalizer, BertPreTokenizer, WordPiece with "##" and [UNK],
// TemplateProcessing "[CLS] $A [SEP]". Writes OUT/bert_tiny.json:
//   {"source", "integrity", "add_special_tokens": true, "cases": [{"text", "ids"}]}
// make_hf_checkpoints.py checks hf_bert.py's ids against it. PACKAGES is the folder
// fetch_npm_packages.sh unpacked "tokenizers" into.
import fs from "fs";
import path from "path";

const [packages, out] = process.argv.slice(2);
const { TokenizerLoader } = await import(path.resolve(packages, "tokenizers", "dist", "main.mjs"));
const pkg = JSON.parse(fs.readFileSync(path.join(packages, "tokenizers", "package.json"), "utf8"));
const integrity = fs.readFileSync(path.join(packages, "tokenizers", ".integrity"), "utf8").trim();
const V = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", ".", "dog", "a", "rug",
           "ran", "##s", "big", "red", "and", "was"];
const special = (id) => ({ id, content: V[id], single_word: false, lstrip: false, rstrip: false, normalized: false,
                           special: true });
const token = (id) => ({ SpecialToken: { id, type_id: 0 } });
const tokenizerJSON = {
  added_tokens: [0, 1, 2, 3, 4].map(special),
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null,
                lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: {
    type: "TemplateProcessing",
    single: [token("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, token("[SEP]")],
    pair: [token("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, token("[SEP]"), { Sequence: { id: "B", type_id: 1 } },
           { SpecialToken: { id: "[SEP]", type_id: 1 } }],
    special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] },
                      "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } },
  },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100,
           vocab: Object.fromEntries(V.map((t, i) => [t, i])) },
};
const tokenizerConfig = { do_lower_case: true, tokenizer_class: "BertTokenizer", unk_token: "[UNK]", sep_token: "[SEP]",
                          pad_token: "[PAD]", cls_token: "[CLS]", mask_token: "[MASK]" };
const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
const texts = ["The cat sat on the [MASK].", "The cat sat on the mat.", "A dog ran.",
               "The big red dogs ran and the cats sat."];
const cases = texts.map((text) => ({ text, ids: tokenizer.encode(text, { add_special_tokens: true }) }));
const doc = { source: `${pkg.name}@${pkg.version}`, integrity, add_special_tokens: true, cases };
fs.writeFileSync(path.join(out, "bert_tiny.json"), JSON.stringify(doc, null, 0).replace(/\},\{/g, "},\n{") + "\n");
console.log(`bert_tiny: ${cases.length} texts`);
