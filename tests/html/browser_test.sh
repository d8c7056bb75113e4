#!/usr/bin/env bash
# The HTML lesson in a real browser: Debian's Chromium, headless, renders attn's default lesson
# (attn explain "I love AI" --html lesson.html), a batch's, attn grad's and attn generate's. Checks:
#   - a screenshot of the page with its script taken out is not blank (png_check: colours and
#     ink), and a blank page's screenshot fails the same check;
#   - the DOM the browser builds (--dump-dom), also without the page's script, has the title of
#     every step `attn steps` lists, and one heatmap per head per attention block;
#   - in the page with its script, hovering a heatmap cell writes its query, key and weight
#     under the heatmaps, and the head selector (radio buttons and CSS, no script) shows one
#     head when it is picked.
# Chromium is installed by scripts/test (scripts/install-deps chromium); without it this test
# fails, never skips.
#
#   browser_test.sh ATTN PNG_CHECK WORK_DIR
set -euo pipefail
attn=$1
png_check=$2
work=$3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || fail "chromium is not installed: the HTML lesson is tested in it (apt-get install -y chromium, or scripts/install-deps chromium)"
rm -rf "$work" && mkdir -p "$work/profile" && cd "$work"

# As root, without a sandbox, a GPU or a network: the background connections Chromium makes
# are refused on a closed network, which it can wait on, so they are turned off.
browse() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$work/profile" \
    "$@" 2>>chromium.log
}

"$attn" explain "I love AI" --html lesson.html >terminal.txt
"$attn" steps "I love AI" >steps.txt
# The page without its script: what a reader with JavaScript off gets.
sed 's#<script>.*##; /^(function/,/^})();/d; s#^</script>##' lesson.html >no-script.html
! grep -q '<script' no-script.html || fail "no-script.html still has a script"

# --- the screenshot shows the lesson; a blank page's does not pass --------------------------
browse --window-size=1280,1600 --screenshot="$work/lesson.png" "file://$work/no-script.html"
"$png_check" lesson.png 200 2 || fail "the screenshot of the lesson looks blank"
echo '<!DOCTYPE html><html><body></body></html>' >blank.html
browse --window-size=1280,1600 --screenshot="$work/blank.png" "file://$work/blank.html"
if "$png_check" blank.png 200 2; then fail "png_check passes a blank page"; fi

# --- the DOM: every step's title, one heatmap per head per attention block ------------------
browse --dump-dom "file://$work/no-script.html" >dom.html
titles=0
while IFS= read -r title; do
  grep -qF "<h4 class=\"step-title\">$title</h4>" dom.html || fail "no step title \"$title\" in the DOM"
  titles=$((titles + 1))
done < <(sed -n 's/^ *\([0-9]\+\)  [a-z_]\+ \+\(.*\)$/Step \1: \2/p' steps.txt)
[ "$titles" = "$(grep -c '^ *[0-9]\+  ' steps.txt)" ] && [ "$titles" -gt 60 ] || fail "read $titles titles"
[ "$(grep -c '<h4 class="step-title">' dom.html)" = "$titles" ] || fail "the DOM has other steps than attn steps lists"
blocks=$(grep -c '^ *[0-9]\+  softmax ' steps.txt)
heads=$(grep -o -m1 'H=[0-9]\+ heads' steps.txt | grep -o '[0-9]\+')
[ "$(grep -o '<svg class="heatmap"' dom.html | wc -l)" = $((blocks * heads)) ] ||
  fail "$(grep -o '<svg class="heatmap"' dom.html | wc -l) heatmaps, expected $blocks blocks x $heads heads"
[ "$(grep -o '<svg class="thumbnail"' dom.html | wc -l)" = $((blocks * heads)) ] || fail "the overview lacks heads"

# A batch: a heatmap per head of each item (seed 000: B=2, H=2, one block).
"$attn" explain --example seed000 --quiet --html batch.html
browse --dump-dom "file://$work/batch.html" >batch-dom.html
[ "$(grep -o '<svg class="heatmap"' batch-dom.html | wc -l)" = 4 ] || fail "the batch's lesson has no 4 heatmaps"

# --- attn grad's lesson: forward and backward steps, every one the terminal titles -----------
# (--full: the terminal titles every step), one heatmap per head, and not blank.
"$attn" grad --example seed004 --full --html grad.html >grad-terminal.txt
sed 's#<script>.*##; /^(function/,/^})();/d; s#^</script>##' grad.html >grad-no-script.html
browse --dump-dom "file://$work/grad-no-script.html" >grad-dom.html
grad_titles=$(grep -c '^── Step [0-9]\+: ' grad-terminal.txt)
backward_titles=$(grep -c '^── Step [0-9]\+: .*, backward ─' grad-terminal.txt)
[ "$grad_titles" -gt 60 ] && [ "$backward_titles" -gt 20 ] ||
  fail "the grad terminal titles $grad_titles steps, $backward_titles backward"
[ "$(grep -o '<h4 class="step-title">Step [0-9]*: ' grad-dom.html | wc -l)" = "$grad_titles" ] ||
  fail "the grad lesson's DOM has $(grep -o '<h4 class="step-title">' grad-dom.html | wc -l) step titles, the terminal $grad_titles"
[ "$(grep -o '<h4 class="step-title">Step [0-9]*: [^<]*, backward</h4>' grad-dom.html | wc -l)" = "$backward_titles" ] ||
  fail "the grad lesson's DOM lacks backward steps"
grad_blocks=$(grep -c '^── Step [0-9]\+: Softmax ─' grad-terminal.txt)
grad_heads=$(grep -o -m1 'H=[0-9]\+ heads\?' grad-terminal.txt | grep -o '[0-9]\+')
[ "$(grep -o '<svg class="heatmap"' grad-dom.html | wc -l)" = $((grad_blocks * grad_heads)) ] ||
  fail "the grad lesson has $(grep -o '<svg class="heatmap"' grad-dom.html | wc -l) heatmaps, expected $grad_blocks x $grad_heads"
browse --window-size=1280,1600 --screenshot="$work/grad.png" "file://$work/grad-no-script.html"
"$png_check" grad.png 200 2 || fail "the screenshot of the grad lesson looks blank"

# --- attn generate's lesson: the first token's steps, then each new token's sections ---------
"$attn" generate --example gpt_tiny -n 3 --html generate.html >generate-terminal.txt
sed 's#<script>.*##; /^(function/,/^})();/d; s#^</script>##' generate.html >generate-no-script.html
browse --dump-dom "file://$work/generate-no-script.html" >generate-dom.html
generate_sections=$(grep -c '^\(══ Token\|── Choosing token\|── decoder\.[0-9]*: the new row\)' generate-terminal.txt)
[ "$generate_sections" -gt 5 ] || fail "the generate terminal has $generate_sections token sections"
[ "$(grep -o '<h[23] class="[a-z]*">\(Token\|Choosing token\|decoder\.[0-9]*: the new row\)' generate-dom.html | wc -l)" = \
  "$generate_sections" ] || fail "the generate lesson's DOM lacks token sections"
generate_titles=$(grep -o '<h4 class="step-title">Step [0-9]*: ' generate-dom.html | wc -l)
[ "$generate_titles" -gt 20 ] || fail "the generate lesson's DOM has $generate_titles step titles"
browse --window-size=1280,1600 --screenshot="$work/generate.png" "file://$work/generate-no-script.html"
"$png_check" generate.png 200 2 || fail "the screenshot of the generate lesson looks blank"

# --- a big model (GPT-2 small's shapes, docs/big-models.md): under 8 MB, every head drawn ----
# small in the overview as a link to its full heatmap on the page, and the table of roles.
"$attn" explain -c "$(dirname "$0")/../cli/input/gpt2_small_shaped.json" --quiet --html big.html
[ "$(stat -c %s big.html)" -le 8388608 ] || fail "the big model's page is $(stat -c %s big.html) bytes"
sed 's#<script>.*##; /^(function/,/^})();/d; s#^</script>##' big.html >big-no-script.html
browse --dump-dom "file://$work/big-no-script.html" >big-dom.html
[ "$(grep -o '<svg class="thumbnail"' big-dom.html | wc -l)" = 144 ] || fail "the big model's overview lacks heads"
[ "$(grep -o '<svg class="heatmap"' big-dom.html | wc -l)" = 144 ] || fail "the big model's page lacks heatmaps"
for target in $(grep -o 'href="#hm-[0-9-]*"><svg class="thumbnail"' big-dom.html | grep -o 'hm-[0-9-]*'); do
  grep -q "id=\"$target\"" big-dom.html || fail "the thumbnail's link #$target leads nowhere"
done
# the roles as a real table: a row per layer (L0 .. L11), a cell per head
grep -q "Every layer.s heads at a glance" big-dom.html && grep -qF "<th>L11</th>" big-dom.html &&
  [ "$(grep -o '<table class="words">' big-dom.html | wc -l)" -ge 1 ] ||
  fail "the big model's page has no table of roles"
browse --window-size=1280,1600 --screenshot="$work/big.png" "file://$work/big-no-script.html"
"$png_check" big.png 200 2 || fail "the screenshot of the big model's page looks blank"

# --- hover and the head selector, in the page with its script -------------------------------
cat >probe.js <<'EOF'
<script>
(function () {
  var group = document.querySelector('main .attention');
  group.querySelector('rect.cell').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
  var lines = ['readout: ' + group.querySelector('.readout').textContent];
  group.querySelector('label[for$="-1"]').click();
  group.querySelectorAll('figure.head').forEach(function (f) {
    lines.push(f.id + ': ' + getComputedStyle(f).display);
  });
  var out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = lines.join('\n') + '\n';
  document.body.appendChild(out);
})();
</script>
EOF
awk '/^<\/body>/ { system("cat probe.js") } { print }' lesson.html >probe.html
browse --dump-dom "file://$work/probe.html" >probe-dom.html
# The first heatmap is step 15's (the encoder's softmax); its first cell, softmax of the first
# row of scaled scores, is 0.9541 (NumPy, from the run's dump).
grep -qF 'readout: head 0: query "I" (0) → key "I" (0): weight 0.9541' probe-dom.html ||
  fail "hovering the first cell did not show its query, key and weight: $(grep -A3 'id="probe"' probe-dom.html)"
grep -qxF 'hm-15-0-0: none' probe-dom.html && grep -qxF 'hm-15-0-1: block' probe-dom.html ||
  fail "picking head 1 does not show head 1 alone: $(grep -A3 'id="probe"' probe-dom.html)"
echo "browser test: the big model's page $(stat -c %s big.html) bytes, 144 heads linked; $titles step titles, $((blocks * heads)) heatmaps; grad: $grad_titles titles ($backward_titles backward), $((grad_blocks * grad_heads)) heatmaps; generate: $generate_titles titles, $generate_sections token sections; hover and head selector work; $("$png_check" lesson.png 0 0)"
