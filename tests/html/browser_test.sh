#!/usr/bin/env bash
# The HTML lesson in a real browser: Debian's Chromium, headless, renders attn's default lesson
# (attn explain "I love AI" --html lesson.html) and a batch's. Checks:
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
grep -qF 'readout: head 0: query "I" (0) → key "I" (0): weight 0.1117' probe-dom.html ||
  fail "hovering the first cell did not show its query, key and weight: $(grep -A3 'id="probe"' probe-dom.html)"
grep -qxF 'hm-14-0-0: none' probe-dom.html && grep -qxF 'hm-14-0-1: block' probe-dom.html ||
  fail "picking head 1 does not show head 1 alone: $(grep -A3 'id="probe"' probe-dom.html)"
echo "browser test: $titles step titles, $((blocks * heads)) heatmaps, hover and head selector work; $("$png_check" lesson.png 0 0)"
