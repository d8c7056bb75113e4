#!/usr/bin/env bash
# A hostile pytorch_model.bin, one case per test: make_hostile_bin.py writes a small GPT-2
# (a tokenizer of 16 characters) and a .bin made to attack its reader (code named in the
# pickle, storages and shapes that lie, pickle bombs, a broken zip). `attn validate --model`
# and `attn explain --model` must each end in exit 2 within a second, with one line on
# stderr naming the file and the entry or tensor, nothing on stdout, and nothing written:
# not the canary the attacks would create if their code ran, not any other file in the
# folder. The good cases (zip, legacy, sharded) must load and run, so that every other case
# fails for the one thing it breaks.
#
#   hostile_pickles.sh CASE ATTN WORK_DIR
set -uo pipefail
case_name=$1
ATTN=$2
work=$3/$case_name
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
source "$here/shell_expect.sh"
canary=$work/CANARY

python3 "$here/make_hostile_bin.py" model "$case_name" "$canary" ||
  fail "could not write the folder"
listing() { find . -mindepth 1 -path ./out -prune -o -path ./err -prune -o -printf '%p %s %T@\n' | sort; }
before=$(listing)

# refused PATTERN...: both commands exit 2 within a second of CPU time with one line on
# stderr matching every PATTERN (extended regular expressions), write nothing on stdout,
# and leave the folder as it was.
refused() {
  for command in validate explain; do
    local -a args=("$command" --model model)
    [ "$command" = explain ] && args+=("bad cafe")
    local start end
    cpu_ms_now start
    "$ATTN" "${args[@]}" >out 2>err
    status=$?
    cpu_ms_now end
    expect_status 2
    one_line_stderr
    [ -s out ] && fail "$command wrote to stdout: $(head -c 200 out)"
    for pattern in "$@"; do
      grep -qE -- "$pattern" err || fail "$command: stderr does not match '$pattern': $(cat err)"
    done
    (( end - start < 1000 )) || fail "$command took $(( end - start )) ms of CPU time"
    [ -e "$canary" ] && fail "$command ran the pickle's code: $canary exists"
    [ "$(listing)" = "$before" ] || fail "$command changed the folder: $(diff <(echo "$before") <(listing))"
  done
  return 0
}

bin='model/pytorch_model\.bin'
case $case_name in
  good | good_legacy | good_sharded)
    "$ATTN" validate --model model >out 2>err
    status=$?
    expect_status 0
    grep -q "GPT2LMHeadModel" out || fail "validate does not name the architecture: $(cat out)"
    "$ATTN" explain --model model --quiet --dump d.json "bad cafe" >out 2>err
    status=$?
    expect_status 0
    grep -q '"output.logits"' d.json || fail "the dump has no output.logits"
    ;;
  # code named in the pickle: refused at the name, before anything is called
  global_os_system) refused "$bin" 'pytorch_model/data\.pkl' 'byte 2: GLOBAL' 'os\.system' 'runs no pickle code' ;;
  pickled_os_system) refused "$bin" 'GLOBAL' 'posix\.system' ;;
  stack_global_popen) refused "$bin" 'STACK_GLOBAL' 'subprocess\.Popen' ;;
  builtins_eval) refused "$bin" 'builtins\.eval' ;;
  builtins_exec) refused "$bin" 'builtins\.exec' ;;
  getattr_reduce) refused "$bin" 'builtins\.getattr' ;;
  reduce_hostile_args) refused "$bin" 'REDUCE calls torch\._utils\._rebuild_tensor_v2 with a tuple of 1' ;;
  build_on_tensor) refused "$bin" 'BUILD gives a tensor the state a dict of 1' ;;
  newobj) refused "$bin" 'NEWOBJ \(0x81\) is not one a state dict' ;;
  inst) refused "$bin" 'INST \(0x69\) is not one a state dict' ;;
  obj) refused "$bin" 'OBJ \(0x6f\) is not one a state dict' ;;
  # storages and shapes that disagree with the data
  missing_storage) refused "$bin" 'h\.0\.attn\.c_attn\.weight: its storage "99" is not in the file' ;;
  storage_past_data) refused "$bin" 'h\.0\.attn\.c_attn\.weight: its storage "4" holds 100 bytes, but its persistent id says 48 elements' ;;
  storage_10gb) refused "$bin" 'h\.0\.attn\.c_attn\.weight: its storage "4" holds 192 bytes, but its persistent id says 2684354560 elements' ;;
  offset_past_storage) refused "$bin" 'h\.0\.attn\.c_attn\.weight: shape \[4, 12\] from element 48 goes past the end of its storage' ;;
  negative_shape) refused "$bin" 'h\.0\.attn\.c_attn\.weight: shape \[-4, 12\] has a negative dimension' ;;
  huge_shape) refused "$bin" 'h\.0\.attn\.c_attn\.weight: shape \[1099511627776, 1099511627776\] holds more than 2\^63 elements' ;;
  shape_vs_storage) refused "$bin" 'h\.0\.attn\.c_attn\.weight: shape \[4, 13\] from element 0 goes past the end of its storage "4" \(48 elements\)' ;;
  noncontiguous) refused "$bin" 'h\.0\.attn\.c_attn\.weight: strides \[1, 4\] are not those of shape \[4, 12\] in C order \(\[12, 1\]\)' ;;
  negative_stride) refused "$bin" 'h\.0\.attn\.c_attn\.weight: strides \[-12, 1\] are not those of shape \[4, 12\]' ;;
  huge_stride) refused "$bin" 'h\.0\.attn\.c_attn\.weight: strides \[4611686018427387904, 1\] are not those of shape \[4, 12\]' ;;
  integer_dtype) refused "$bin" 'h\.0\.attn\.c_attn\.weight' 'I64' ;;
  unknown_dtype) refused "$bin" 'torch\.ComplexFloatStorage' ;;
  # pickle bombs: refused at their limit
  deep_nesting) refused "$bin" 'more than 64 MARKs open at once' ;;
  nested_tuples) refused "$bin" 'containers nested more than 64 deep' ;;
  memo_flood) refused "$bin" 'more than 1048576 memo entries' ;;
  repetition) refused "$bin" 'a stack of more values than a state dict' ;;
  # the zip and the legacy format's layout
  truncated_zip) refused "$bin" 'end of central directory' 'truncated' ;;
  compressed_entry) refused "$bin" 'pytorch_model/data\.pkl: the entry is compressed \(method 8\)' ;;
  byteorder_big) refused "$bin" 'pytorch_model/byteorder: expected "little", found "big"' ;;
  zip_dotdot) refused "$bin" 'pytorch_model/\.\./\.\./CANARY: a zip entry named outside the archive' ;;
  legacy_truncated) refused "$bin" 'storage "15"' 'past the end of the file \(truncated\?\)' ;;
  legacy_count) refused "$bin" 'storage "4": the file says 47 elements, its persistent id 48' ;;
  legacy_storage_10gb) refused "$bin" 'storage "4": its 2684354560 elements of 4 bytes at byte [0-9]+ go past the end of the file' ;;
  sharded_missing_shard) refused 'pytorch_model\.bin\.index\.json' 'pytorch_model-00002-of-00002\.bin' ;;
  *) fail "no such case" ;;
esac
exit 0
