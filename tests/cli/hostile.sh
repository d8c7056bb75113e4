#!/usr/bin/env bash
# CLI tests that need a shell: closed and full standard streams, signals, pipes, file
# modes, links. Each case ends with one line on stderr and the right exit code, nothing on
# stdout that looks like success, and no partial or temporary file left behind.
#
#   hostile.sh CASE ATTN WORK_DIR [ARG...]
set -uo pipefail
case_name=$1
ATTN=$2
work=$3/$case_name
here=$(cd "$(dirname "$0")" && pwd)
shift 3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
source "$here/shell_expect.sh"

# A model big enough for the parallel kernels and a dump of several megabytes.
big_model() { "$ATTN" init --d-model 64 --heads 4 --d-ff 128 --layers 2 --seq 300 -o big.json >/dev/null 2>&1; }

case $case_name in
  closed_stdout_with_dump)
    # The dump's temporary file must not become standard output: the walkthrough cannot be
    # written, so the run fails before the dump is committed.
    "$ATTN" explain --dump d.json >&- 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: Bad file descriptor"
    expect_files ""
    ;;
  closed_stdout_quiet_dump)
    # Nothing to write to standard output: the dump is written, and is JSON.
    "$ATTN" explain --quiet --dump d.json >&- 2>err
    status=$?
    expect_status 0
    head -c 30 d.json | grep -q '^{"format": "attn-trace"' || fail "d.json is not a dump: $(head -c 80 d.json)"
    expect_files "d.json "
    ;;
  full_stdout)
    for command in "explain" "steps" "examples" "validate $1" "--help"; do
      # shellcheck disable=SC2086
      "$ATTN" $command >/dev/full 2>err
      status=$?
      expect_status 1
      expect_stderr "attn: cannot write to standard output: No space left on device"
    done
    "$ATTN" init --preset tiny >/dev/full 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write the model file to standard output: write failed: No space left on device"
    ;;
  closed_stdout_steps)
    "$ATTN" steps >&- 2>err
    status=$?
    expect_status 1
    one_line_stderr
    ;;
  full_stdout_dump)
    # --dump - writes the dump itself to standard output: the machine's failure, exit 1.
    "$ATTN" explain --quiet --dump - >/dev/full 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write the dump to standard output: write failed: No space left on device"
    ;;
  sigpipe)
    # The reader goes away after one line: attn dies of SIGPIPE, leaving no temporary file.
    # (The walkthrough is written when the run ends, its map first: --threshold makes it
    # megabytes, far more than a pipe holds, so the write meets the closed pipe.)
    big_model
    "$ATTN" explain -c big.json --threshold 100000 --dump d.npz 2>err | head -1 >out
    status=${PIPESTATUS[0]}
    [ "$status" = 141 ] || fail "exit status $status, expected 141 (SIGPIPE)"
    expect_files "big.json "
    ;;
  signals)
    # Each signal that ends a process, sent while the dump is being written: no file left.
    # (SIGINT and SIGQUIT are ignored by jobs a script starts in the background, and attn
    # leaves an ignored signal ignored; the unit tests send those two.)
    big_model
    for sig in USR1 USR2 ALRM XCPU VTALRM PROF HUP TERM; do
      "$ATTN" explain -c big.json --quiet --dump d.json 2>err &
      pid=$!
      for _ in $(seq 200); do
        compgen -G ".d.json.tmp-*" >/dev/null && break
        sleep 0.02
      done
      compgen -G ".d.json.tmp-*" >/dev/null || fail "SIG$sig: the run finished before a temporary file was seen"
      kill -s "$sig" "$pid"
      wait "$pid"
      status=$?
      [ "$status" -gt 128 ] || fail "SIG$sig: exit status $status, expected death by the signal"
      expect_files "big.json "
    done
    ;;
  keeps_mode)
    # A private file replaced by a dump stays private, also through a symbolic link.
    echo old >d.json && chmod 600 d.json && ln -s d.json link.json
    "$ATTN" explain --quiet --dump d.json 2>err
    status=$?
    expect_status 0
    [ "$(stat -c %a d.json)" = 600 ] || fail "mode $(stat -c %a d.json), expected 600"
    "$ATTN" explain --quiet --dump link.json 2>err
    status=$?
    expect_status 0
    [ -L link.json ] || fail "link.json is no longer a link"
    [ "$(stat -c %a d.json)" = 600 ] || fail "through the link: mode $(stat -c %a d.json), expected 600"
    ;;
  long_name)
    # 255 bytes is the longest file name: the temporary name must not add to it.
    name=$(printf 'n%.0s' $(seq 250)).json
    "$ATTN" explain --quiet --dump "$name" 2>err
    status=$?
    expect_status 0
    expect_files "$name "
    ;;
  link_loop)
    ln -s loop.json loop.json
    "$ATTN" explain --quiet --dump loop.json 2>err
    status=$?
    expect_status 2
    expect_stderr "loop.json: cannot write the dump: it is a symbolic link that leads nowhere (Too many levels of symbolic links)"
    [ -L loop.json ] || fail "loop.json was replaced"
    ;;
  thread_start_fails)
    # pthread_create fails (a preloaded library says EAGAIN): libgomp gives up with exit(1);
    # the temporary file goes with it.
    big_model
    LD_PRELOAD=$1 "$ATTN" explain -c big.json --quiet --dump d.json 2>err
    status=$?
    expect_status 1
    grep -q "Thread creation failed" err || fail "stderr: $(cat err)"
    expect_files "big.json "
    ;;
  control_bytes)
    # Parser errors quote the argument escaped, on one line.
    "$ATTN" explain $'--bo\x1b[31m\n\x07\xc2\x9b\xe2\x80\xaegus' 2>err
    status=$?
    expect_status 2
    one_line_stderr
    if grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80\xae' err; then fail "raw control bytes: $(cat -v err)"; fi
    ;;
  control_bytes_file_names)
    # A file name with control bytes reaches standard output escaped, as in the error
    # messages: validate's summary, generate's header, train's held-out line.
    name=$'m\x1b[31m\x07.json'
    cp "$1/data/examples/trained_translate.json" "$name"
    no_raw_bytes() { if grep -qP '[\x00-\x08\x0b-\x1f\x7f]' out; then fail "$1: raw control bytes: $(cat -v out)"; fi; }
    "$ATTN" validate "$name" >out 2>err
    status=$?
    expect_status 0
    no_raw_bytes validate
    grep -qF 'm\u001b[31m\u0007.json: valid: ' out || fail "validate: $(cat -v out)"
    "$ATTN" generate -c "$name" "I love AI" -n 1 >out 2>err
    status=$?
    expect_status 0
    no_raw_bytes generate
    grep -qF 'Generating with m\u001b[31m\u0007.json: ' out || fail "generate: $(head -3 out | cat -v)"
    eval_name=$'e\x1b[2J.jsonl'
    cp "$1/tests/reference/torch_train/sgd_momentum_clip.jsonl" "$eval_name"
    "$ATTN" train -c "$1/tests/reference/torch_train/sgd_momentum_clip.json" --data "$eval_name" --steps 2 \
      --batch-size 4 --eval "$eval_name" -o model.json >out 2>err
    status=$?
    expect_status 0
    no_raw_bytes train
    grep -qF 'held-out (e\u001b[2J.jsonl, 6 examples)' out || fail "train: $(cat -v out)"
    ;;
  huge_thread_count)
    # OMP_NUM_THREADS beyond the machine (libgomp crashed starting 100000 threads, leaving the
    # temporary dump): capped at the CPUs, said once, and the run completes.
    big_model
    cpus=$(nproc)
    OMP_NUM_THREADS=100000 "$ATTN" explain -c big.json --quiet --dump d.json --timings 2>err
    status=$?
    expect_status 0
    grep -qx "attn: OMP_NUM_THREADS asks for 100000 threads, more than the $cpus CPUs\{0,1\} attn may run on: it uses $cpus" err ||
      fail "no note of the cap: $(cat err)"
    grep -q "($cpus threads\{0,1\}[,)]" err || fail "not $cpus threads: $(cat err)"
    expect_files "big.json d.json "
    (ulimit -s 1024 && OMP_NUM_THREADS=20000 "$ATTN" explain -c big.json --quiet --dump e.json 2>err)
    status=$?
    expect_status 0
    expect_files "big.json d.json e.json "
    ;;
  html_long_sentence)
    # 40 tokens: the terminal leaves the heatmaps out (they do not fit a screen) and says
    # where they are; the HTML page draws every one, and its overview keeps the encoder's row
    # (the page dropped the maps above 32 tokens, and with them the overview's encoder row).
    sentence=$(printf 'the cat %.0s' $(seq 20))
    "$ATTN" explain "$sentence" --steps softmax --linewidth 200 --html lesson.html >out 2>err
    status=$?
    expect_status 0
    grep -q 'note: heatmap left out: 40 queries are more than 32 (the HTML page, --html FILE, draws it)' out ||
      fail "no note in the terminal: $(grep -m3 heatmap out)"
    grep -q 'aria-label="head 0: attention weights of 40 queries over 40 keys"' lesson.html ||
      fail "no 40x40 heatmap in the page"
    grep -q '<tr><th>Encoder layer 0 of 1, Multi-head self-attention <a href="#step-15">' lesson.html ||
      fail "the overview has no encoder row"
    ;;
  html_label_room)
    # The widest label, <BOS>, fits in the room the SVG gives its labels: a row label ends at
    # its x (text-anchor end) and <BOS> is about 41 px wide at 12 px (DejaVu Sans), so x must
    # be 41 or more; it was 37 (5 letters of 7.4 px), and the "<" was cut off.
    "$ATTN" explain "I love AI" --steps softmax --html lesson.html >out 2>err
    status=$?
    expect_status 0
    xs=$(grep -o 'class="row-label" x="[0-9.]*" y="[0-9.]*">&lt;BOS&gt;' lesson.html | sed 's/.* x="\([0-9.]*\)".*/\1/')
    [ -n "$xs" ] || fail "no <BOS> row label"
    for x in $xs; do
      awk -v x="$x" 'BEGIN { exit !(x >= 41) }' || fail "a <BOS> row label ends at x=$x: it needs 41 px"
    done
    ;;
  empty_values)
    # An empty value names nothing: refused, naming the option.
    for option in --config --dump --example --layer; do
      "$ATTN" explain "$option" "" 2>err
      status=$?
      expect_status 2
      one_line_stderr
      grep -q "^attn: $option: expected .*, found an empty string (run 'attn --help' for usage)$" err ||
        fail "stderr: $(cat err)"
    done
    "$ATTN" validate "" 2>err
    status=$?
    expect_status 2
    expect_stderr "attn: files: expected a file name, found an empty string (run 'attn --help' for usage)"
    ;;
  unprintable_text)
    # Text that is not UTF-8, or holds control characters or reordering marks, never reaches
    # the terminal or a dump: refused, naming where.
    for text in $'\xff' $'I love \xc3' $'I \x1b[31mlove' $'I love \xe2\x80\xaeIA'; do
      "$ATTN" explain "$text" >out 2>err
      status=$?
      expect_status 2
      one_line_stderr
      grep -q '^<default model>: text (command line): expected printable UTF-8 text, found ' err || fail "$(cat -v err)"
      [ ! -s out ] || fail "stdout: $(head -c 100 out | cat -v)"
    done
    "$ATTN" explain --target $'J\x07' "I love AI" >out 2>err
    status=$?
    expect_status 2
    expect_stderr "<default model>: --target (command line): expected printable UTF-8 text, found the control character U+0007 at byte 1"
    # A vocabulary token written with a JSON escape is a control character too.
    printf '%s' '{"model": {"d_model": 2, "num_heads": 1}, "vocab": ["a", "b\u001b[2J"], "embedding": "randn",
      "input": {"tokens": ["a"]}, "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]}' >m.json
    "$ATTN" validate m.json >out 2>err
    status=$?
    expect_status 2
    expect_stderr "m.json: vocab[1]: expected a printable token, found the control character U+001B at byte 1"
    ;;
  closed_stdout_with_html)
    # As with the dump: the walkthrough cannot be written, so the lesson is not committed.
    "$ATTN" explain --html lesson.html >&- 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: Bad file descriptor"
    expect_files ""
    ;;
  html_numeric_error)
    # A run that overflows shows its steps up to the overflow on the terminal, and leaves no
    # lesson: the file is written whole or not at all.
    "$ATTN" explain -c "$1" --html lesson.html >out 2>err
    status=$?
    expect_status 2
    one_line_stderr
    grep -q "Step 8: Transpose K" out || fail "the steps before the overflow are not shown"
    expect_files ""
    ;;
  html_quiet)
    # --quiet --html: nothing on the terminal, the lesson in the file.
    "$ATTN" explain --quiet --html lesson.html "I love AI" >out 2>err
    status=$?
    expect_status 0
    [ ! -s out ] && [ ! -s err ] || fail "printed: $(cat out err)"
    grep -q '<h4 class="step-title">Step 69: Softmax over the vocabulary</h4>' lesson.html || fail "no last step"
    [ "$(grep -c '<svg class="heatmap"' lesson.html)" = 6 ] || fail "not 6 heatmaps"
    expect_files "lesson.html "
    ;;
  grad_html)
    # attn grad --html: the lesson has the title of every step the terminal prints (--full:
    # every step with its title), forward and backward, in the same order (unescaped from the
    # page's HTML), and one heatmap per head of every attention block (the forward's softmax
    # steps; the backward draws none). Without --full the terminal folds repeated kinds into
    # one line each, and the page still has every step.
    "$ATTN" grad --example seed004 --full --html lesson.html >out 2>err
    status=$?
    expect_status 0
    titles() {
      sed -n 's#.*<h4 class="step-title">\(Step [0-9]\+: .*\)</h4>.*#\1#p' "$1" |
        sed 's/&quot;/"/g; s/&#39;/'"'"'/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g'
    }
    sed -n 's/^── \(Step [0-9]\+: .*\)$/\1/p' out | sed -E 's/ (─)+$//' >terminal-titles
    titles lesson.html >page-titles
    [ "$(wc -l <terminal-titles)" -gt 60 ] || fail "the terminal shows $(wc -l <terminal-titles) steps"
    grep -q ', backward$' terminal-titles || fail "no backward step on the terminal"
    diff terminal-titles page-titles >titles.diff || fail "the page's step titles differ: $(head -5 titles.diff)"
    blocks=$(grep -c '^Step [0-9]\+: Softmax$' terminal-titles)
    heads=$(grep -o -m1 'H=[0-9]\+ heads\?' out | grep -o '[0-9]\+')
    [ "$blocks" -gt 0 ] && [ "$(grep -o '<svg class="heatmap"' lesson.html | wc -l)" = $((blocks * heads)) ] ||
      fail "$(grep -o '<svg class="heatmap"' lesson.html | wc -l) heatmaps, expected $blocks blocks x $heads heads"
    "$ATTN" grad --example seed004 --quiet --html quiet.html >out 2>err
    status=$?
    expect_status 0
    [ ! -s out ] || fail "--quiet printed: $(head -3 out)"
    titles quiet.html >quiet-titles
    diff terminal-titles quiet-titles >titles.diff || fail "the --quiet page's titles differ: $(head -5 titles.diff)"
    rm terminal-titles page-titles quiet-titles titles.diff
    expect_files "lesson.html quiet.html "
    ;;
  grad_closed_stdout_with_html)
    # The terminal's walkthrough cannot be written: the run fails before the lesson is
    # committed, and leaves no file.
    "$ATTN" grad --example seed004 --html lesson.html >&- 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: Bad file descriptor"
    expect_files ""
    ;;
  generate_html)
    # attn generate --html: the first token's whole walkthrough (every step the terminal
    # titles, one heatmap per head of each layer), then each new token's sections as the
    # terminal prints them, in order: its new q, k, v rows, the cache, its scores and weights
    # against the cached keys as tables, and each choice's top-k table and draw.
    "$ATTN" generate --example gpt_tiny -n 3 --temperature 0.8 --top-k 5 --top-p 0.9 --brief --html lesson.html \
      >out 2>err
    status=$?
    expect_status 0
    unescape() { sed 's/&quot;/"/g; s/&#39;/'"'"'/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g'; }
    pattern='^(Token|Choosing token|decoder\.[0-9]+: the new row|The KV cache)'
    grep -E '^(══|──) ' out | sed -E 's/^(══|──) //; s/ (══|──)$//' | grep -E "$pattern" >terminal-sections
    sed -n 's#^<h[23] class="[a-z]*">\(.*\)</h[23]>$#\1#p' lesson.html | unescape | grep -E "$pattern" >page-sections
    tokens=$(grep -c '^Token [2-9]' terminal-sections)
    choices=$(grep -c '^Choosing token' terminal-sections)
    rows=$(grep -c '^decoder\.[0-9]*: the new row' terminal-sections)
    [ "$tokens" = 2 ] && [ "$choices" = 3 ] && [ "$rows" -ge 2 ] || fail "terminal: $tokens tokens, $choices choices"
    diff terminal-sections page-sections >sections.diff || fail "the page's sections differ: $(head -5 sections.diff)"
    sed -n 's/^── \(Step [0-9]\+: .*\)$/\1/p' out | sed -E 's/ (─)+$//' >terminal-titles
    sed -n 's#.*<h4 class="step-title">\(Step [0-9]\+: .*\)</h4>.*#\1#p' lesson.html | unescape >page-titles
    [ -s terminal-titles ] && ! grep -vxFf page-titles terminal-titles || fail "a step title is not in the page"
    [ "$(sed 's/:.*//' page-titles | tr '\n' ' ')" = "$(seq -f 'Step %g' 1 "$(wc -l <page-titles)" | tr '\n' ' ')" ] ||
      fail "the page's steps are not 1 to $(wc -l <page-titles)"
    heads=$(grep -o -m1 'H=[0-9]\+ heads\?' out | grep -o '[0-9]\+')
    [ "$(grep -o '<svg class="heatmap"' lesson.html | wc -l)" = $((rows / tokens * heads)) ] ||
      fail "$(grep -o '<svg class="heatmap"' lesson.html | wc -l) heatmaps, expected $((rows / tokens)) layers x $heads"
    for caption in 'the new query against every cached key' 'weights = softmax of each row'; do
      [ "$(grep -c "<table class=\"labeled\"><caption>$caption" lesson.html)" = "$rows" ] || fail "not $rows tables: $caption"
    done
    [ "$(grep -c '<table class="labeled"><caption>the next-token distribution' lesson.html)" = "$choices" ] ||
      fail "not $choices top-k tables"
    [ "$(grep -c '<figcaption><code>[qkv] (position ' lesson.html)" = $((rows * 3)) ] || fail "not $((rows * 3)) q, k, v rows"
    # Each draw's u and its number in the stream (the terminal wraps the rest of the line).
    draw='the draw: u = [0-9.]* (random_sample number [0-9]*'
    grep -o "$draw" out >terminal-draws
    [ "$(wc -l <terminal-draws)" = "$choices" ] && grep -o "<p class=\"line\">$draw" lesson.html |
      sed 's#<p class="line">##' | diff terminal-draws - >/dev/null || fail "the draws differ"
    # --quiet: the same page, nothing but the generated text on the terminal.
    "$ATTN" generate --example gpt_tiny -n 3 --temperature 0.8 --top-k 5 --top-p 0.9 --brief --quiet --html quiet.html \
      >out 2>err
    status=$?
    expect_status 0
    [ "$(wc -l <out)" = 1 ] || fail "--quiet printed: $(head -3 out)"
    cmp -s lesson.html quiet.html || fail "the --quiet lesson differs"
    rm terminal-sections page-sections sections.diff terminal-titles page-titles terminal-draws
    expect_files "lesson.html quiet.html "
    ;;
  generate_closed_stdout_with_html)
    "$ATTN" generate --example gpt_tiny -n 2 --html lesson.html >&- 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: Bad file descriptor"
    expect_files ""
    ;;
  train_outputs_full_stdout)
    # The summary could not be written (/dev/full, a closed standard output): the run fails
    # and leaves neither the model nor the log (both were committed before the summary).
    train=(-c "$1/sgd_momentum_clip.json" --data "$1/sgd_momentum_clip.jsonl" --steps 2 -o m.json --log l.jsonl)
    "$ATTN" train "${train[@]}" >/dev/full 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: No space left on device"
    expect_files ""
    "$ATTN" train "${train[@]}" >&- 2>err
    status=$?
    expect_status 1
    expect_stderr "attn: cannot write to standard output: Bad file descriptor"
    expect_files ""
    # Written: both files, and the summary.
    "$ATTN" train "${train[@]}" >out 2>err
    status=$?
    expect_status 0
    grep -q '^2 steps: loss ' out || fail "no summary: $(cat out)"
    expect_files "l.jsonl m.json "
    ;;
  train_output_folder_missing)
    # A folder that does not exist is refused before the work (it was found after training,
    # leaving the log behind).
    "$ATTN" train --task copy --steps 200 -o nodir/m.json --log l.jsonl >out 2>err
    status=$?
    expect_status 2
    one_line_stderr
    grep -q '^nodir/m.json: cannot write the model file: ' err || fail "not the model file: $(cat err)"
    expect_files ""
    ;;
  train_model_to_stdout)
    # -o -: standard output is the model alone (the summary goes to stderr), so it pipes
    # into explain -c -.
    "$ATTN" train -c "$1/sgd_momentum_clip.json" --data "$1/sgd_momentum_clip.jsonl" --steps 2 -o - 2>err |
      "$ATTN" explain -c - --steps tokens >out 2>explain-err
    status=$?
    expect_status 0
    grep -q '^2 steps: loss ' err || fail "no summary on stderr: $(cat err)"
    grep -q 'Step 1: ' out || fail "explain -c - did not run: $(cat explain-err)"
    "$ATTN" train -c "$1/sgd_momentum_clip.json" --data "$1/sgd_momentum_clip.jsonl" --steps 2 -o - 2>err >out
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' out || fail "stdout is not one JSON model"
    rm explain-err
    expect_files ""
    ;;
  long_text_refused_fast)
    # 6,000 words with no target: the greedy target was decoded before the estimate (25-43 s,
    # 1.7 GB). Now the estimate, with the target the decoding can grow to, comes first.
    words=$(printf 'I love AI %.0s' $(seq 2000))
    for command in explain steps heads; do
      start=$(date +%s%N)
      "$ATTN" $command "$words" --max-memory 0.5 >out 2>err
      status=$?
      elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
      expect_status 2
      one_line_stderr
      grep -q 'this run would need about .*more than the limit of 512.0 MiB' err || fail "$command: $(cat err)"
      [ "$elapsed_ms" -lt 5000 ] || fail "$command took $elapsed_ms ms to refuse"
    done
    expect_files ""
    ;;
  train_data_endless_line | train_data_zero | train_eval_nul)
    # Data files are read line by line: a line without end, /dev/zero or a NUL byte is
    # refused at its line within a second, not after reading 256 MiB (3.6-5.6 s, 519 MiB).
    model=$1/sgd_momentum_clip.json data=$1/sgd_momentum_clip.jsonl
    measured() { /usr/bin/time -f %M -o peak_kb "$ATTN" "$@" 2>err >out; }
    [ -x /usr/bin/time ] || measured() { echo 0 >peak_kb && "$ATTN" "$@" 2>err >out; }
    start=$(date +%s%N)
    case $case_name in
      train_data_endless_line)
        yes a | tr -d '\n' | measured train -c "$model" --data - -o x.json
        status=${PIPESTATUS[2]}
        line="<stdin>:1: expected a line of at most 16.0 MiB (one example; write large tensors as {\"zeros\": [S, d]}), found a longer line; is this the right file?"
        ;;
      train_data_zero)
        measured train -c "$model" --data /dev/zero -o x.json </dev/null
        status=$?
        line="/dev/zero:1: column 1: expected text, found a NUL byte; is this the right file?"
        ;;
      train_eval_nul)
        { head -n 2 "$data"; printf '{"tokens": ["the\0"]}\n'; } >eval.jsonl
        measured train -c "$model" --data "$data" --eval eval.jsonl -o x.json </dev/null
        status=$?
        rm -f eval.jsonl
        line="eval.jsonl:3: column 17: expected text, found a NUL byte; is this the right file?"
        ;;
    esac
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    expect_status 2
    one_line_stderr
    expect_stderr "$line"
    [ "$elapsed_ms" -lt 5000 ] || fail "took $elapsed_ms ms to refuse"
    [ "$(tail -n 1 peak_kb)" -lt 200000 ] || fail "peak memory $(tail -n 1 peak_kb) KiB"
    rm -f peak_kb
    expect_files ""
    ;;
  *)
    fail "no such case"
    ;;
esac
exit 0
