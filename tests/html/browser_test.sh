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
# (each map a canvas of its weights, drawn by the page's script: issue 36)
[ "$(grep -o '<canvas class="thumbnail"' big-dom.html | wc -l)" = 144 ] || fail "the big model's overview lacks heads"
[ "$(grep -o '<canvas class="heatmap"' big-dom.html | wc -l)" = 144 ] || fail "the big model's page lacks heatmaps"
for target in $(grep -o 'href="#hm-[0-9-]*"[^>]*><canvas class="thumbnail"' big-dom.html | grep -o 'hm-[0-9-]*'); do
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
# --- issue 36: maps drawn on canvases from their weights; the head view and the model view ---
# GPT-2's tokenizer on 12 layers of 12 heads (tests/cli/make_checkpoint_folder.py): a big
# model's page draws each head on a canvas from its weights (4 decimals, base64), the
# thumbnails from the maps, and, from the same data, a bertviz-style head view and model view.
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/../cli/make_checkpoint_folder.py" gpt2-12x12 "$here/../data/gpt2" twelve_by_twelve >/dev/null
"$attn" explain --model gpt2-12x12 "The cat sat on the mat." --quiet --html canvas.html --dump canvas.json
! grep -q 'http' canvas.html || fail "the canvas page names an address: $(grep -o '.\{20\}http.\{20\}' canvas.html | head -1)"
# What the page must show, from attn's own dump: layer 0, head 0, query 6 (".") over key 2
# ("␣sat"); the colour of that weight on the viridis scale (heatmap_color's five anchors); and
# how many of query 6's weights in layer 0 are not 0 at 4 decimals (a line each in the head view).
read -r weight colour lines < <(/usr/bin/python3 -c '
import json
w = next(t for t in json.load(open("canvas.json"))["tensors"] if t["name"] == "decoder.0.self_attention.weights")["data"]
v = round(w[0][6][2] * 10000) / 10000
anchors = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
p = v * 4
low = min(3, int(p))
rgb = [int(a + (b - a) * (p - low) + 0.5) for a, b in zip(anchors[low], anchors[low + 1])]
print(f"{v:.4f}", ",".join(map(str, rgb)), sum(1 for head in w for x in head[6] if round(x * 10000) > 0))')
cat >canvas-probe.js <<'PROBE'
<script>
(function () {
  var lines = [], canvas = document.querySelector('main canvas.heatmap'), cell = +canvas.dataset.cell;
  var r = canvas.getBoundingClientRect(), cx = +canvas.dataset.left + 2.5 * cell, cy = +canvas.dataset.top + 6.5 * cell;
  canvas.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + cx * r.width / canvas.width,
                                                    clientY: r.top + cy * r.height / canvas.height}));
  lines.push('readout: ' + canvas.closest('.attention').querySelector('.readout').textContent);
  var px = canvas.getContext('2d').getImageData(cx, cy, 1, 1).data;
  lines.push('pixel: ' + px[0] + ',' + px[1] + ',' + px[2]);
  var thumb = document.querySelector('canvas.thumbnail');
  var t = thumb.getContext('2d').getImageData(0, 0, thumb.width, thumb.height).data, ink = 0;
  for (var k = 0; k < t.length; k += 4) ink += t[k + 3] > 0 ? 1 : 0;
  lines.push('thumbnails: ' + document.querySelectorAll('canvas.thumbnail').length + ', the first drawn: ' + (ink > 0));
  var hv = document.getElementById('head-view'), mv = document.getElementById('model-view');
  lines.push('head view: ' + hv.querySelector('.hv-layer').options.length + ' layers, ' +
             hv.querySelectorAll('.hv-heads input').length + ' heads, ' + hv.querySelectorAll('svg line').length +
             ' lines');
  var line = hv.querySelector('svg line[data-head="0"][data-key="2"]');
  lines.push('head 0 to key 2: ' + line.getAttribute('stroke-opacity') + ' ' + line.getAttribute('stroke'));
  hv.querySelector('.hv-heads input[data-head="0"]').click();
  lines.push('head 0 hidden: ' + hv.querySelectorAll('svg line[data-head="0"]').length + ' lines of head 0');
  hv.querySelector('svg text[data-i="0"]').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  lines.push('query 0 picked: ' + hv.querySelectorAll('svg line').length + ' lines, model view query ' +
             mv.querySelector('.mv-query').value);
  lines.push('model view: ' + mv.querySelectorAll('table.mv tr').length + ' rows, ' +
             mv.querySelectorAll('canvas.mv-cell').length + ' cells');
  var out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = lines.join('\n') + '\n';
  document.body.appendChild(out);
})();
</script>
PROBE
awk '/^<\/body>/ { system("cat canvas-probe.js") } { print }' canvas.html >canvas-probe.html
browse --dump-dom "file://$work/canvas-probe.html" >canvas-dom.html
probe=$(sed -n '/id="probe"/,/<\/pre>/p' canvas-dom.html)
expect() { grep -qF -- "$1" <<<"$probe" || fail "the canvas page: no \"$1\" in: $probe"; }
expect "readout: head 0: query \".\" (6) → key \"␣sat\" (2): weight $weight"
expect "pixel: $colour"
expect "thumbnails: 144, the first drawn: true"
expect "head view: 12 layers, 12 heads, $lines lines"
expect "head 0 to key 2: $weight #1f77b4"
expect "head 0 hidden: 0 lines of head 0"
expect "query 0 picked: 11 lines, model view query 0" # query 0 reads itself alone; head 0 hidden
expect "model view: 12 rows, 144 cells"
# The model view's screenshot, compared by its structure: every head's colour drawn, enough
# of it for a bar in each of the 12 rows, in 12 columns from left to right (head 0 leftmost).
cat >only-model-view.js <<'PROBE'
<script>
document.querySelectorAll('body > *:not(#model-view):not(script)').forEach(function (e) { e.style.display = 'none'; });
</script>
PROBE
awk '/^<\/body>/ { system("cat only-model-view.js") } { print }' canvas.html >model-view.html
browse --window-size=1280,900 --screenshot="$work/model-view.png" "file://$work/model-view.html"
"$png_check" model-view.png --where 1f77b4 ff7f0e 2ca02c d62728 9467bd 8c564b e377c2 7f7f7f bcbd22 17becf 393b79 \
  637939 >where.txt
awk 'BEGIN { last = -1 } $2 < 12 * 10 { print "few pixels of " $1 ": " $2; bad = 1 }
     $3 <= last { print $1 " not right of the head before"; bad = 1 } { last = $3 } END { exit bad }' where.txt ||
  fail "the model view's screenshot: $(cat where.txt)"
canvas_size=$(stat -c %s canvas.html)

echo "browser test: the big model's page $(stat -c %s big.html) bytes, 144 heads linked; the canvas page $canvas_size bytes, head and model views; $titles step titles, $((blocks * heads)) heatmaps; grad: $grad_titles titles ($backward_titles backward), $((grad_blocks * grad_heads)) heatmaps; generate: $generate_titles titles, $generate_sections token sections; hover and head selector work; $("$png_check" lesson.png 0 0)"
