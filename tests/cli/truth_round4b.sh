#!/usr/bin/env bash
# Issue 31 (truth round 4), the Medium and Low items that need a folder or a file: one case
# per test. make_checkpoint_folder.py writes the small GPT-2 folder with GPT-2's real
# tokenizer; a case changes one thing and checks what attn says.
#
#   truth_round4b.sh CASE ATTN WORK_DIR SOURCE_DIR
set -uo pipefail
case_name=$1
ATTN=$2
work=$3/$case_name
source_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
source "$here/shell_expect.sh"

make_folder() {  # make_folder DIR: the good folder at ./DIR
  python3 "$here/make_checkpoint_folder.py" "$1" "$source_dir/tests/data/gpt2" good || fail "could not write the folder"
}
# tokenizer_json DIR SPECIAL [REGEX]: DIR's vocab.json and merges.txt replaced by one
# tokenizer.json of the same BPE, whose id 50256 is the special token SPECIAL (added in front
# of every text by its post-processor), and, with REGEX, a Split pre-tokenizer on it.
tokenizer_json() {
  python3 - "$1" "$2" "${3:-}" <<'PY' || fail "could not write tokenizer.json"
import json, os, sys
folder, special, regex = sys.argv[1], sys.argv[2].encode().decode("unicode_escape"), sys.argv[3]
vocab = json.load(open(os.path.join(folder, "vocab.json"), encoding="utf-8"))
merges = [l for l in open(os.path.join(folder, "merges.txt"), encoding="utf-8").read().split("\n")[1:] if l]
del vocab["<|endoftext|>"]
vocab[special] = 50256
byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": not regex}
pre = byte_level if not regex else {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}, byte_level]}
first = {"SpecialToken": {"id": special, "type_id": 0}}
doc = {"version": "1.0", "truncation": None, "padding": None,
       "added_tokens": [{"id": 50256, "content": special, "single_word": False, "lstrip": False, "rstrip": False,
                         "normalized": False, "special": True}],
       "normalizer": None, "pre_tokenizer": pre,
       "post_processor": {"type": "TemplateProcessing", "single": [first, {"Sequence": {"id": "A", "type_id": 0}}],
                          "pair": [first, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                          "special_tokens": {special: {"id": special, "ids": [50256], "tokens": [special]}}},
       "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
       "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                 "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": merges}}
os.remove(os.path.join(folder, "vocab.json"))
os.remove(os.path.join(folder, "merges.txt"))
json.dump(doc, open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
PY
}
no_raw_controls() {  # no_raw_controls WHAT: ./out holds no ESC byte nor a line of the special token's split
  if grep -qP '\x1b' out; then fail "$1: a raw ESC reaches the terminal: $(grep -P '\x1b' out | head -2 | cat -v)"; fi
}
run() { "$ATTN" "$@" >out 2>err; status=$?; }

case $case_name in
  special_token_escaped)
    # A special token's text with an escape sequence and a line break, put in front of every
    # text: shown escaped, as an error message shows it, in every walkthrough.
    make_folder model
    tokenizer_json model '\x1b[31m<|x|>\n'
    for command in "explain --steps tokens" "generate -n 1" "heads"; do
      # shellcheck disable=SC2086
      run $command --model model "The cat sat"
      expect_status 0
      no_raw_controls "$command"
      grep -qF '\u001b[31m<|x|>\n' out || fail "$command: the special token is not shown escaped: $(head -c 600 out | cat -v)"
    done
    ;;
  folder_name_escaped)
    # A folder named with an escape sequence: the heads and tokenize headers escape it.
    name=$'m\x1b[2J'
    make_folder "$name"
    run heads --model "$name" "The cat sat"
    expect_status 0
    no_raw_controls heads
    grep -qF 'attn heads: m\u001b[2J, 3 tokens: ' out || fail "heads: $(head -1 out | cat -v)"
    run tokenize --model "$name" "The cat sat"
    expect_status 0
    no_raw_controls tokenize
    grep -qxF '3 tokens (byte-level BPE, 50257 in the vocabulary, from m\u001b[2J)' out || fail "tokenize: $(head -1 out | cat -v)"
    ;;
  generate_quiet_and_json)
    # gpt2_tokenizer_f16's greedy picks after "The cat sat on the mat" (make_hf_checkpoints.py,
    # expected.json's "greedy"): --json gives those ids and their text as the tokenizer
    # decodes it; -q prints that text alone, unquoted (it printed it in quotes, escaped).
    model=$source_dir/tests/reference/hf_checkpoints/gpt2_tokenizer_f16
    ids=$(python3 -c 'import json,sys; print(",".join(str(s["id"]) for s in json.load(open(sys.argv[1]))["greedy"]))' "$model/expected.json")
    run generate --model "$model" "The cat sat on the mat" -n 5 --json
    expect_status 0
    python3 - "$ids" <<'PY' || fail "--json: $(cat out)"
import json, sys
out = json.load(open("out"))
assert set(out) == {"ids", "text"}, out
assert ",".join(map(str, out["ids"])) == sys.argv[1], (out["ids"], sys.argv[1])
open("text", "w", encoding="utf-8").write(out["text"] + "\n")
PY
    run generate --model "$model" "The cat sat on the mat" -n 5 -q
    expect_status 0
    cmp -s out text || fail "-q does not print the decoded text as it is: $(cat -A out) vs $(cat -A text)"
    run generate --model "$model" "The cat sat on the mat" -n 5 --json --dump -
    expect_status 2
    one_line_stderr
    ;;
  config_is_directory | index_is_fifo | shard_is_directory | weights_is_device)
    make_folder model
    case $case_name in
      config_is_directory) rm model/config.json && mkdir model/config.json; what='model/config\.json: expected the model.s configuration as a JSON file, found a directory$' ;;
      index_is_fifo) rm model/model.safetensors && mkfifo model/model.safetensors.index.json; what='model/model\.safetensors\.index\.json: expected the index of the weights. shards as a JSON file, found a FIFO$' ;;
      weights_is_device) rm model/model.safetensors && ln -s /dev/null model/model.safetensors; what='model/model\.safetensors: expected the weights as a safetensors file, found a character device$' ;;
      shard_is_directory)
        mv model/model.safetensors model/model-00001-of-00001.safetensors
        python3 -c 'import json; print(json.dumps({"weight_map": {"wte.weight": "shard"}}))' >model/model.safetensors.index.json
        mkdir model/shard
        what='model/shard: expected a shard of the weights as a safetensors file, found a directory$' ;;
    esac
    run validate --model model
    expect_status 2
    one_line_stderr
    grep -qE "$what" err || fail "stderr does not match '$what': $(cat err)"
    ;;
  config_duplicate_key)
    # attn's own JSON reader refuses a key named twice; config.json's took the last silently.
    make_folder model
    sed -i 's/"n_layer": 1,/"n_layer": 1, "n_layer": 2,/' model/config.json
    grep -q '"n_layer": 2' model/config.json || fail "the fixture did not take"
    run validate --model model
    expect_status 2
    one_line_stderr
    expect_stderr 'model/config.json: n_layer: duplicate key "n_layer": a JSON object names each key once'
    ;;
  regex_match_limit)
    # (a|aa)+$ on 40 a's and a b backtracks past PCRE2's match limit: the error names the file,
    # the pattern's JSON path and PCRE2's own message.
    make_folder model
    tokenizer_json model '<|endoftext|>' '(a|aa)+$'
    run tokenize --model model "$(printf 'a%.0s' $(seq 40))b"
    expect_status 2
    one_line_stderr
    grep -qE '^model/tokenizer\.json: pre_tokenizer\.pretokenizers\[0\]\.pattern\.Regex: the regular expression failed on the text at byte 0: match limit exceeded \(PCRE2 error -47\)$' err ||
      fail "stderr: $(cat err)"
    ;;
  html_overview_layers)
    # The web page's overview of every head names each row's layer, decoder-only too (the
    # rows said "Decoder-only, masked self-attention", no layer).
    run explain --example gpt_tiny --quiet --html page.html
    expect_status 0
    grep -qF '<tr><th>Decoder-only (GPT-style) layer 0 of ' page.html || fail "no layer in the overview's rows: $(grep -o '<tr><th>[^<]*' page.html | head -3)"
    ;;
  grad_causal_loss)
    # No labels on a causal language model: the loss of the text's own next tokens, Hugging
    # Face's labels=input_ids, against PyTorch (tests/reference/make_causal_lm_loss.py).
    model=$source_dir/tests/reference/hf_checkpoints/gpt2_tokenizer_f16
    run grad --model "$model" "The cat sat on the mat" --quiet --dump dump.json
    expect_status 0
    grep -qF "no labels given: a causal language model's loss is its text's own next tokens" err ||
      fail "the note is not on stderr: $(cat err)"
    python3 - "$source_dir/tests/reference/causal_lm/gpt2_tokenizer_f16.json" <<'PY' || fail "the loss differs"
import json, sys
reference = json.load(open(sys.argv[1]))
dump = json.load(open("dump.json"))
loss = next(t for t in dump["tensors"] if t["name"] == "loss")["data"]
loss = loss[0] if isinstance(loss, list) else loss
assert abs(loss - reference["loss"]) <= 1e-12 * abs(reference["loss"]), (loss, reference["loss"])
PY
    ;;
  empty_values_refused)
    # '' names no heads, no element, no steps: refused as --layer '' is (they ran the default).
    for option in --ablate --cell --steps; do
      run explain "$option" ''
      expect_status 2
      one_line_stderr
      grep -qE "^attn: $option: expected .*, found an empty string \(run 'attn --help' for usage\)$" err || fail "$option '': $(cat err)"
    done
    run grad --steps ''
    expect_status 2
    run generate --ablate ''
    expect_status 2
    ;;
  *) fail "no such case" ;;
esac
exit 0
