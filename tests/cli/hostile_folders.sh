#!/usr/bin/env bash
# A broken or hostile Hugging Face folder, one case per test: make_checkpoint_folder.py
# writes a small GPT-2 checkpoint with GPT-2's real tokenizer and breaks one thing; then
# `attn validate --model` and `attn explain --model` must each end in exit 2 with one line on
# stderr naming the file and the tensor or field, and nothing on stdout. The case "good" is
# the same folder unbroken: it must load and run, so that every other case fails for the
# one thing it breaks and not for a folder that never worked.
#
#   hostile_folders.sh CASE ATTN WORK_DIR TOKENIZER_DIR
set -uo pipefail
case_name=$1
ATTN=$2
work=$3/$case_name
tokenizer_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
source "$here/shell_expect.sh"

make_folder() {  # make_folder CASE: the folder ./model broken as CASE says
  python3 "$here/make_checkpoint_folder.py" model "$tokenizer_dir" "$1" || fail "could not write the folder"
}
# refused PATTERN... : both commands exit 2 with one line on stderr matching every PATTERN
# (extended regular expressions), and write nothing on stdout.
refused() {
  local -a extra=()
  [ -n "${max_memory:-}" ] && extra=(--max-memory "$max_memory")
  for command in validate explain; do
    local -a args=("$command" --model "${model:-model}" "${extra[@]}")
    [ "$command" = explain ] && args+=("${text-The cat sat on the mat}")
    "$ATTN" "${args[@]}" >out 2>err
    status=$?
    expect_status 2
    one_line_stderr
    [ -s out ] && fail "$command wrote to stdout: $(head -c 200 out)"
    for pattern in "$@"; do
      grep -qE -- "$pattern" err || fail "$command: stderr does not match '$pattern': $(cat err)"
    done
  done
}

case $case_name in
  good)
    make_folder good
    "$ATTN" validate --model model >out 2>err
    status=$?
    expect_status 0
    grep -q "GPT2LMHeadModel" out || fail "validate does not name the architecture: $(cat out)"
    "$ATTN" explain --model model --quiet --dump d.json "The cat sat on the mat" >out 2>err
    status=$?
    expect_status 0
    grep -q '"output.logits"' d.json || fail "the dump has no output.logits"
    ;;
  config_missing_field) make_folder "$case_name"; refused 'config\.json' 'n_embd' ;;
  heads_not_dividing) make_folder "$case_name"; refused 'config\.json' 'n_head' ;;
  vocab_2_40) make_folder "$case_name"; refused 'config\.json' 'vocab_size' ;;
  layers_1e9) make_folder "$case_name"; max_memory=1 refused 'config\.json' 'memory' ;;
  unsupported_architecture) make_folder "$case_name"; refused 'config\.json' 'XLNetLMHeadModel' 'GPT2LMHeadModel' ;;
  missing_weight) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.mlp\.c_fc\.bias' ;;
  transposed_weight) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' '\[12, 4\]' ;;
  integer_dtype) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' 'I32' ;;
  unknown_dtype) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' 'F12' ;;
  nan_weight) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' '[Nn]a[Nn]' ;;
  minus_inf_weight) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.mlp\.c_proj\.weight' 'inf' ;;
  shape_vs_span) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' ;;
  negative_dimension) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' ;;
  fractional_dimension) make_folder "$case_name"; refused 'model\.safetensors' 'h\.0\.attn\.c_attn\.weight' ;;
  offsets_past_end) make_folder "$case_name"; refused 'model\.safetensors' 'ln_f\.bias' ;;
  offsets_overlapping) make_folder "$case_name"; refused 'model\.safetensors' 'ln_f\.(bias|weight)' ;;
  header_length_past_end) make_folder "$case_name"; refused 'model\.safetensors' 'header' ;;
  header_length_2_63) make_folder "$case_name"; refused 'model\.safetensors' 'header' ;;
  header_not_json) make_folder "$case_name"; refused 'model\.safetensors' 'JSON' ;;
  sharded_missing_shard) make_folder "$case_name"; refused 'model-00002-of-00002\.safetensors' ;;
  # Every tensor of the files is read or known unused: a layer past config.json's n_layer, or
  # a tensor GPT-2 has no use for, is named; the old mask buffers load.
  extra_layer) make_folder "$case_name"; refused 'model\.safetensors: h\.1\.attn\.c_attn\.bias: expected 1 layer \(config\.json.s n_layer = 1\), found a tensor of layer 1' ;;
  unused_tensor) make_folder "$case_name"; refused 'model\.safetensors: h\.0\.attn\.rotary\.weight: unexpected: GPT2LMHeadModel does not use this tensor' ;;
  mask_buffers)
    make_folder "$case_name"
    "$ATTN" explain --model model --quiet --dump d.json "The cat sat on the mat" >out 2>err
    status=$?
    expect_status 0
    grep -q '"output.logits"' d.json || fail "the dump has no output.logits"
    ;;
  no_tokenizer) make_folder "$case_name"; refused 'tokenizer\.json' 'vocab\.json' ;;
  truncated_vocab) make_folder "$case_name"; refused 'vocab\.json' ;;
  malformed_merges) make_folder "$case_name"; refused 'merges\.txt' 'line 11' ;;
  # A tokenizer file of 200 MB of zero bytes (sparse) is refused at its first byte, not
  # after reading all of it.
  vocab_zeros | merges_zeros)
    make_folder good
    file=${case_name%_zeros}; [ "$file" = vocab ] && file=vocab.json || file=merges.txt
    rm -f "model/$file" && truncate -s 200M "model/$file"
    refused "$file" 'expected a tokenizer file \(text\), found a NUL byte at byte 0$'
    ;;
  text_too_long)
    make_folder good
    text=$(printf 'cat %.0s' $(seq 40))
    "$ATTN" explain --model model "$text" >out 2>err
    status=$?
    expect_status 2
    one_line_stderr
    grep -qE '16' err || fail "stderr does not name the 16 positions: $(cat err)"
    ;;
  empty_text)
    make_folder good
    "$ATTN" explain --model model "" >out 2>err
    status=$?
    expect_status 2
    one_line_stderr
    ;;
  path_is_file) make_folder good; model=model/config.json refused 'model/config\.json' ;;
  path_missing) model=no/such/folder refused 'no/such/folder' ;;
  *) fail "no such case" ;;
esac
exit 0
