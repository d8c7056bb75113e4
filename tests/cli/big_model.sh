#!/usr/bin/env bash
# The lesson of a big model (issue 23, "the lesson at real size"): GPT-2 small's shapes
# (tests/cli/input/gpt2_small_shaped.json: 12 layers of 12 heads, d_model 768, d_ff 3072)
# on "<BOS> the cat sat on the mat ." stays readable: at most 800 lines, none wider than
# 75 columns, every layer named, the overview of every layer's heads, the next tokens; and
# --layer, --head, --steps and --full bring any part back in full.
#
# The case "checkpoint" reads the same number of layers and heads through --model: a GPT-2
# checkpoint folder (make_checkpoint_folder.py twelve_by_twelve, GPT-2's own tokenizer).
#
#   big_model.sh CASE ATTN SOURCE_DIR WORK_DIR
set -uo pipefail
case_name=$1
ATTN=$2
model=$3/tests/cli/input/gpt2_small_shaped.json
work=$4/$case_name
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export LC_ALL=C.UTF-8  # wc -L counts display columns

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
run() {
  "$ATTN" explain -c "$model" --linewidth 75 "$@" >out 2>err || fail "exit $?: $(cat err)"
  [ -s err ] && fail "stderr: $(cat err)"
  return 0
}
has() { grep -qF -- "$1" out || fail "no line with '$1'"; }
has_not() { ! grep -qF -- "$1" out || fail "a line with '$1': $(grep -F -- "$1" out | head -2)"; }
count() { grep -cF -- "$1" out; }

case $case_name in
  checkpoint)
    /usr/bin/python3 "$3/tests/cli/make_checkpoint_folder.py" gpt2-12x12 "$3/tests/data/gpt2" twelve_by_twelve ||
      fail "cannot write the checkpoint"
    "$ATTN" explain --model gpt2-12x12 "The cat sat on the mat." --linewidth 75 >out 2>err || fail "exit $?: $(cat err)"
    [ -s err ] && fail "stderr: $(cat err)"
    lines=$(wc -l <out)
    width=$(wc -L <out)
    [ "$lines" -le 800 ] || fail "$lines lines, more than 800"
    [ "$width" -le 75 ] || fail "a line of $width columns: $(awk 'length > 75' out | head -1)"
    has "Model: GPT2LMHeadModel read from gpt2-12x12;"
    has '"The"→464  "␣cat"→3797  "␣sat"→3332  "␣on"→319  "␣the"→262  "␣mat"→2603'
    has '"."→13'
    # The final LayerNorm's arithmetic is step 6's: pointed to, not worked again.
    has "(worked as at step 6; --steps 294 works it here)"
    for layer in $(seq 0 11); do has "══ Decoder-only (GPT-style) layer $layer of 12 "; done
    for layer in $(seq 1 11); do has "(--layer $layer shows them); heads: "; done
    has "W_q = h.0.attn.c_attn.weight[:, 0:96]   (the checkpoint's tensor)"
    has "══ Every layer's heads at a glance ══"
    for layer in $(seq 0 11); do grep -qE "^    L$layer +[-A-Za-z]" out || fail "no row L$layer in the overview"; done
    has "6 after \".\":"
    echo "$lines lines, widest $width columns"
    ;;
  lesson)
    run
    lines=$(wc -l <out)
    width=$(wc -L <out)
    [ "$lines" -le 800 ] || fail "$lines lines, more than 800"
    [ "$width" -le 75 ] || fail "a line of $width columns: $(awk 'length > 75' out | head -1)"
    for layer in $(seq 0 11); do has "══ Decoder-only (GPT-style) layer $layer of 12 "; done
    # Layer 0 in full, its wide tensors summarized; the others a summary each.
    has "── Step 17: Softmax "
    has "(S=8,F=3072)"
    [ "$(count "── Step ")" -le 30 ] || fail "$(count "── Step ") steps shown in full"
    for layer in $(seq 1 11); do has "(--layer $layer shows them); heads: "; done
    has "══ Every layer's heads at a glance ══"
    has "      h0   h1   h2   h3   h4   h5   h6   h7   h8   h9   h10  h11"
    for layer in $(seq 0 11); do grep -qE "^    L$layer +[-A-Za-z]" out || fail "no row L$layer in the overview"; done
    has "top 3 next tokens"
    has "7 after \".\":"
    echo "$lines lines, widest $width columns"
    ;;
  layer)
    # --layer 5: that layer's steps, every one in full (softmax, its heatmaps, the context).
    run --layer 5
    has "══ Decoder-only (GPT-style) layer 5 of 12 "
    [ "$(count "── Step ")" -ge 20 ] || fail "$(count "── Step ") steps in full, expected the layer's 21"
    has "── Step 122: Softmax "
    has "weights = "
    has_not "shows them"
    has_not "at a glance"
    ;;
  head)
    # --head 3: every layer's steps again (later kinds one line each, as for a small model),
    # each tensor with a head axis sliced to head 3.
    run --head 3
    [ "$(count "══ Decoder-only (GPT-style) layer ")" = 12 ] || fail "not every layer's steps"
    has "weights[h=3] = "
    has " 248  weights = softmax(masked, axis=-1)"
    has_not "shows them"
    ;;
  steps)
    run --steps 248-249
    has "── Step 248: Softmax "
    has "── Step 249: Context "
    [ "$(count "── Step ")" = 2 ] || fail "$(count "── Step ") steps shown"
    ;;
  html)
    # The page keeps every step; the grid of every layer's heads; small enough to open.
    "$ATTN" explain -c "$model" --quiet --html lesson.html 2>err || fail "exit $?: $(cat err)"
    size=$(stat -c %s lesson.html)
    [ "$size" -le 8388608 ] || fail "the page is $size bytes, more than 8 MB"
    grep -qF "Every layer&#39;s heads at a glance" lesson.html || grep -qF "Every layer's heads at a glance" lesson.html ||
      fail "no role table"
    # a <table>, a row per layer with a cell per head ("prev .89"), not preformatted text
    [ "$(grep -o '<tr><th>L[0-9]*</th>\(<td>[^<]*</td>\)\{12\}</tr>' lesson.html | wc -l)" = 12 ] ||
      fail "the role table is not a table of 12 layers x 12 heads"
    [ "$(grep -o '<svg class="heatmap' lesson.html | wc -l)" -ge 144 ] || fail "fewer than 144 heatmaps"
    echo "the page: $size bytes"
    ;;
  *) fail "unknown case" ;;
esac
