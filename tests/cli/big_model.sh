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

# The 12x12 checkpoint folder (GPT-2's tokenizer), as `checkpoint` below; `long` has 512 positions.
folder() {
  /usr/bin/python3 "$3/tests/cli/make_checkpoint_folder.py" "$1" "$3/tests/data/gpt2" "$2" >/dev/null ||
    fail "cannot write the checkpoint $1"
}
ckpt() {
  "$ATTN" "$@" >out 2>err || fail "exit $?: $(cat err)"
  [ -s err ] && fail "stderr: $(cat err)"
  return 0
}
widest() { wc -L <"${1:-out}"; }
# The lines from the first line matching $1 up to (not including) the first after it matching $2.
section() { awk -v a="$1" -v b="$2" 'index($0, a) == 1 { on = 1; print; next } on && index($0, b) == 1 { exit } on' out; }

case $case_name in
  generate)
    # Issue 36: a later token's walkthrough is one page: per layer its q, k, v as their edges and
    # statistics and each head's weights as a line of shades, then the choice (at most 120 lines on
    # 12 layers, 75 columns); --full keeps every number and the tables of every head.
    folder gpt2-12x12 twelve_by_twelve "$3"
    ckpt generate --model gpt2-12x12 "The cat sat on the mat." -n 3
    section '══ Token 2: ' '══ Token 3: ' >token2
    lines=$(wc -l <token2)
    [ "$lines" -le 120 ] || fail "token 2 takes $lines lines, more than 120"
    [ "$(widest token2)" -le 75 ] || fail "a line of token 2 is $(widest token2) columns wide"
    grep -q '── Choosing token 2 ' token2 || fail "token 2's page has no choice"
    [ "$(grep -c '^── decoder\.[0-9]*: the new row ──$' token2)" = 12 ] || fail "not every layer's new row"
    grep -qE '^  q = \[.* \.\.\. .*\]   μ=[-0-9.e]+ σ=[0-9.e]+$' token2 || fail "no q as its edges and statistics"
    # every head of every layer: h0 .. h11, 12 times each, a shade per position (8 positions)
    [ "$(grep -oE 'h11 \[.{8}\]' token2 | wc -l)" = 12 ] || fail "no 8-position shade line of head 11 in every layer"
    grep -q 'one character per position' token2 || fail "the shades' legend"
    ckpt generate --model gpt2-12x12 "The cat sat on the mat." -n 3 --full
    section '══ Token 2: ' '══ Token 3: ' >full2
    [ "$(wc -l <full2)" -gt 400 ] || fail "--full's token 2 is $(wc -l <full2) lines: not every number"
    grep -q '  weights = softmax of each row:' full2 || fail "--full has no table of every head's weights"
    echo "a later token: $lines lines (--full: $(wc -l <full2)), widest $(widest token2) columns"
    ;;
  heads)
    # attn heads fits the terminal: COLUMNS (else 75), in blocks of heads, every head named.
    folder gpt2-12x12 twelve_by_twelve "$3"
    COLUMNS=80 ckpt heads --model gpt2-12x12 "The cat sat on the mat."
    [ "$(widest)" -le 80 ] || fail "a line of $(widest) columns at COLUMNS=80: $(awk 'length > 80' out | head -1)"
    for h in $(seq 0 11); do grep -qE "^ +(.* )?head $h( |$)" out || fail "no column of head $h"; done
    [ "$(grep -c '^layer 11 ' out)" -ge 2 ] || fail "one block of heads: the table cannot fit 80 columns"
    narrow=$(widest)
    COLUMNS=400 ckpt heads --model gpt2-12x12 "The cat sat on the mat."
    [ "$(grep -c '^layer 11 ' out)" = 1 ] || fail "400 columns hold every head in one block"
    # the ablation's table spells pieces as the lesson does ("␣cat", not GPT-2's "Ġcat")
    COLUMNS=80 ckpt heads --model gpt2-12x12 "The cat sat on the mat." --ablate 0.0
    grep -qE '^1 after ␣cat +@ ' out || fail "no row \"1 after ␣cat\": $(grep '^1 after' out)"
    ! grep -q 'Ġ' out || fail "a piece spelled with Ġ: $(grep 'Ġ' out | head -1)"
    [ "$(widest)" -le 80 ] || fail "a line of $(widest) columns with --ablate at COLUMNS=80"
    echo "heads: widest $narrow columns at COLUMNS=80"
    ;;
  lens)
    # The logit lens: one row per line within the width (blocks of layers), pieces as the
    # learner reads them ("␣cat", not "Ġcat"), small probabilities with their digits.
    folder gpt2-12x12 twelve_by_twelve "$3"
    ckpt explain --model gpt2-12x12 "The cat sat on the mat." --lens --linewidth 75
    awk '/Logit lens: the top token/ { on = 1 } on' out >lens
    [ -s lens ] || fail "no lens table"
    [ "$(widest lens)" -le 75 ] || fail "a lens line of $(widest lens) columns"
    grep -qF '    1 after "␣cat"' lens || fail "no row after ␣cat, one line"
    [ "$(grep -c '^    6 after "\."' lens)" -ge 2 ] || fail "the layers are not in blocks of rows"
    ! grep -q 'Ġ' lens || fail "a piece spelled with Ġ: $(grep 'Ġ' lens | head -1)"
    ! grep -qE '" 0\.00( |$)' lens || fail "a probability printed as 0.00: $(grep -E '" 0\.00( |$)' lens | head -1)"
    grep -q 'layer 11' lens || fail "no column of layer 11"
    echo "the lens: widest $(widest lens) columns"
    ;;
  worked_row)
    # A causal model's worked softmax and context are the last query's (it reads every
    # position), not row 0's (which reads itself alone); --cell picks another.
    folder gpt2-12x12 twelve_by_twelve "$3"
    ckpt explain --model gpt2-12x12 "The cat sat on the mat." --linewidth 75
    grep -qF '    weights[0][6] = softmax(masked[0][6]), masked[0][6] = [' out || fail "the worked softmax is not row 6's"
    grep -qF '    context[0][6] = ' out || fail "the worked context is not row 6's"
    # a big model's worked rows show 5 terms before the "…" (the lesson stays a few hundred lines)
    grep -qF '(96 terms, 91 not shown)' out || fail "a worked dot product of 96 terms does not show 5"
    ckpt explain --model gpt2-12x12 "The cat sat on the mat." --linewidth 75 --cell 0,1,2,0
    grep -qF '    weights[1][2] = softmax(masked[1][2])' out || fail "--cell 0,1,2,0 does not work row 2 of head 1"
    ;;
  model_line)
    # A model's line with a long folder path is wrapped like every other line.
    deep=a-folder-whose-name-is-long-enough-to-push-the-model-line/past-seventy-five-columns
    mkdir -p "$(dirname "$deep")"
    folder "$deep" twelve_by_twelve "$3"
    ckpt explain --model "$deep" "The cat sat." --linewidth 75
    [ "$(widest)" -le 75 ] || fail "a line of $(widest) columns: $(awk 'length > 75' out | head -1)"
    grep -qF 'Model: GPT2LMHeadModel read from' out || fail "no model line"
    # and generate's heading, which names the folder too (its lines, up to the first blank one)
    ckpt generate --model "$deep" "The cat sat." -n 1 --brief
    awk '/^$/ { exit } { print }' out >heading
    [ "$(wc -L <heading)" -le 75 ] || fail "generate: a heading line of $(wc -L <heading) columns: $(cat heading)"
    grep -q '^Generating with$' heading && grep -qF 'past-seventy-five-columns:' heading ||
      fail "generate: no heading naming the folder: $(cat heading)"
    ;;
  query)
    # --query POS: where that token looks, a grid of every layer and head, within the width.
    folder gpt2-12x12 twelve_by_twelve "$3"
    ckpt explain --model gpt2-12x12 "The cat sat on the mat." --linewidth 75 --query 5
    awk '/^══ Where "␣mat" \(position 5\) looks, in every layer and head ══$/ { on = 1 } on' out >grid
    [ -s grid ] || fail "no grid for --query 5"
    [ "$(widest grid)" -le 75 ] || fail "a grid line of $(widest grid) columns"
    for l in $(seq 0 11); do grep -qE "^L$l +[0-5] \.[0-9]{2}|^L$l +[0-5] 1\.0" grid || fail "no row L$l"; done
    grep -qE '^ +h0 +h1 ' grid && grep -qE ' h11$' grid || fail "not every head named"
    grep -qF 'keys: 0 The, 1 ␣cat, 2 ␣sat, 3 ␣on, 4 ␣the, 5 ␣mat' grid || fail "no keys' legend"
    "$ATTN" explain --model gpt2-12x12 "The cat sat on the mat." --query 7 >out 2>err && fail "--query 7 of 7 tokens ran"
    grep -qF -- '--query: expected a position of the 7 tokens the self-attention reads (0 to 6), found 7' err ||
      fail "--query 7: $(cat err)"
    ;;
  progress)
    # Long work shows its progress on a terminal's stderr (a pseudo-terminal from util-linux's
    # script), never in the output: attn heads by layer, generate -q by layer then token, attn
    # patch by sites.
    folder gpt2-12x12-long twelve_by_twelve_long "$3"
    text=$(printf 'The cat sat on the mat because it was tired of chasing the mouse around the old house, and the dog watched it quietly from the door. %.0s' 1 2 3 4 5 6 7 8 9 10)
    # (the line appears at once, not after 0.5 s: a fast machine's run may take less)
    export ATTN_PROGRESS_AFTER=0
    script -qec "'$ATTN' heads --model gpt2-12x12-long '$text' >heads.txt" /dev/null >tty.txt ||
      fail "heads on a terminal: $(cat tty.txt)"
    grep -qE $'\rattn: (input|decoder layer [0-9]+/12|output head)' tty.txt ||
      fail "no progress of heads on the terminal: $(od -c tty.txt | head -3)"
    grep -qF $'\r\x1b[K' tty.txt || fail "the progress line of heads is not erased at the end"
    grep -q '^layer 11 ' heads.txt && ! grep -q 'attn: decoder' heads.txt || fail "heads' output: $(head -3 heads.txt)"
    script -qec "'$ATTN' generate --model gpt2-12x12-long '$text' -n 3 -q >generated.txt" /dev/null >tty.txt ||
      fail "generate -q on a terminal: $(cat tty.txt)"
    grep -qF $'\rattn: ' tty.txt || fail "no progress of generate -q on the terminal: $(od -c tty.txt | head -3)"
    [ -s generated.txt ] && ! grep -q 'attn: ' generated.txt || fail "generate -q's output: $(head -3 generated.txt)"
    # attn patch by sites: 12 layers x 5 positions of resid_pre.
    script -qec "'$ATTN' patch --model gpt2-12x12-long --clean 'The cat sat on the' --corrupt 'The dog sat on the' \
      --answer ' mat' --sites resid_pre >patched.txt" /dev/null >tty.txt || fail "patch on a terminal: $(cat tty.txt)"
    grep -qE $'\rattn patch: [0-9]+/60 sites patched, [0-9]+\.[0-9] s' tty.txt ||
      fail "no progress of patch on the terminal: $(od -c tty.txt | head -3)"
    grep -qF $'\r\x1b[K' tty.txt || fail "the progress line of patch is not erased at the end"
    grep -q 'resid_pre' patched.txt && ! grep -q 'sites patched' patched.txt || fail "patch's output: $(head -3 patched.txt)"
    ;;
  html_long)
    # The page of a 280-token text on 12 layers of 12 heads: under 64 MB and 2 GiB, the maps
    # drawn on canvases from their weights (a few bytes a weight), not a cell element each. Its
    # time is printed, not asserted (a test holds no speed target: under the sanitizers on a
    # loaded machine it took 134 s).
    folder gpt2-12x12-long twelve_by_twelve_long "$3"
    text=$(printf 'The cat sat on the mat because it was tired of chasing the mouse around the old house, and the dog watched it quietly from the door. %.0s' 1 2 3 4 5 6 7 8 9 10)
    ids=$("$ATTN" tokenize --model gpt2-12x12-long "$text" --json | grep -o '"ids":\[[^]]*\]' | tr -cd ',' | wc -c)
    [ "$ids" -ge 279 ] || fail "the text is $((ids + 1)) tokens"
    # the run's wall time and peak resident memory (KiB), measured by Python's resource module
    read -r seconds peak < <(/usr/bin/python3 -c '
import resource, subprocess, sys, time
start = time.monotonic()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("err", "w")).returncode
print(f"{time.monotonic() - start:.1f}", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if code == 0 else -1)
' "$ATTN" explain --model gpt2-12x12-long "$text" --quiet --html long.html)
    [ "$peak" -ge 0 ] || fail "exit: $(cat err)"
    size=$(stat -c %s long.html)
    [ "$size" -le 67108864 ] || fail "the page is $size bytes, more than 64 MB"
    [ "$peak" -le 2097152 ] || fail "the run took $peak KiB, more than 2 GiB"
    [ "$(grep -o '<canvas class="heatmap"' long.html | wc -l)" = 144 ] || fail "not one canvas per head"
    ! grep -q '<rect class="cell"' long.html || fail "a map drawn as SVG cells"
    echo "the 280-token page: $size bytes, $peak KiB, $seconds s"
    ;;
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
    # The page keeps every step; the grid of every layer's heads; small enough to open (the
    # 11-token page of issue 36 under 8 MB: each head's map one canvas of its weights).
    "$ATTN" explain -c "$model" --quiet --html lesson.html 2>err || fail "exit $?: $(cat err)"
    size=$(stat -c %s lesson.html)
    [ "$size" -le 8388608 ] || fail "the page is $size bytes, more than 8 MB"
    folder gpt2-12x12 twelve_by_twelve "$3"
    "$ATTN" explain --model gpt2-12x12 "The cat sat on the mat because it was tired." --quiet --html eleven.html \
      2>err || fail "exit $?: $(cat err)"
    eleven=$(stat -c %s eleven.html)
    [ "$eleven" -le 4194304 ] || fail "the 11-token page is $eleven bytes, more than 4 MB"
    grep -qF "Every layer&#39;s heads at a glance" lesson.html || grep -qF "Every layer's heads at a glance" lesson.html ||
      fail "no role table"
    # a <table>, a row per layer with a cell per head ("prev .89"), not preformatted text
    [ "$(grep -o '<tr><th>L[0-9]*</th>\(<td>[^<]*</td>\)\{12\}</tr>' lesson.html | wc -l)" = 12 ] ||
      fail "the role table is not a table of 12 layers x 12 heads"
    [ "$(grep -o '<canvas class="heatmap"' lesson.html | wc -l)" = 144 ] || fail "not one canvas per head"
    [ "$(grep -o '<canvas class="thumbnail"' lesson.html | wc -l)" = 144 ] || fail "not one thumbnail per head"
    ! grep -q '<rect class="cell"' lesson.html || fail "a map drawn as SVG cells"
    echo "the page: $size bytes; the 11-token page: $eleven bytes"
    ;;
  *) fail "unknown case" ;;
esac
