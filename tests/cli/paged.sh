#!/usr/bin/env bash
# Tests of scripts/paged, the pager of scripts/demo: it pages only on a terminal (the tests
# give it one with script(1), from util-linux), follows PAGER, and otherwise uses less
# with LESS=FRX or more; --no-pager and --pause turn it off; colour and the width follow
# the terminal; closing the pager early is no error.
#
#   paged.sh CASE ATTN SOURCE_DIR WORK_DIR
set -uo pipefail
case_name=$1
ATTN=$2
paged=$3/scripts/paged
work=$4/$case_name
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work" || exit 1

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
# A pager that records how it was run, then copies its input (or stops after one line).
cat >bin/fake-pager <<'PAGER'
#!/bin/sh
echo "paged LESS=${LESS-unset} args=$*" >>"$PAGER_LOG"
if [ "${1:-}" = one-line ]; then head -1; else cat; fi
PAGER
chmod +x bin/fake-pager
export PAGER_LOG=$work/pager.log
# on_terminal COMMAND...: runs COMMAND with a pseudo-terminal as its standard output
# (and input); its output, with the terminal's carriage returns removed, goes to out.
on_terminal() {
  local quoted
  quoted=$(printf '%q ' "$@")
  TERM=xterm script -qec "stty cols 90 rows 20; $quoted" /dev/null </dev/null | tr -d '\r' >out
  status=${PIPESTATUS[0]}
}
has_escape() { grep -q $'\e\[' out; }
unset PAGER LESS NO_COLOR COLUMNS

case $case_name in
  pager_on_terminal)
    PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    [ "$status" = 0 ] || fail "exit status $status"
    grep -q '^paged' pager.log || fail "the pager did not run"
    grep -q 'Step 1: Input X' out || fail "the lesson did not come through: $(head -5 out)"
    has_escape || fail "no colour while paging to a terminal"
    grep -q 'paged LESS=FRX' pager.log || fail "LESS is not FRX, as git sets it: $(cat pager.log)"
    ;;
  less_by_default)
    # Without PAGER, less (here a fake one first in PATH) with LESS=FRX, as git runs it.
    cp bin/fake-pager bin/less
    PATH=$work/bin:$PATH on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    [ "$status" = 0 ] || fail "exit status $status"
    grep -qx 'paged LESS=FRX args=' pager.log || fail "less ran as: $(cat pager.log 2>/dev/null)"
    LESS=R PATH=$work/bin:$PATH on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    grep -qx 'paged LESS=R args=' pager.log || fail "the user's LESS was not kept: $(cat pager.log)"
    ;;
  pager_with_options)
    # PAGER runs through the shell, so it may hold options.
    PAGER="$work/bin/fake-pager -x --y" on_terminal "$paged" "$ATTN" examples
    grep -q 'args=-x --y' pager.log || fail "the pager's options were lost: $(cat pager.log 2>/dev/null)"
    grep -q 'seed000_batched_mha' out || fail "no output: $(cat out)"
    ;;
  no_pager)
    PAGER=$work/bin/fake-pager on_terminal "$paged" --no-pager "$ATTN" explain --example seed000 --steps 1
    [ "$status" = 0 ] || fail "exit status $status"
    [ ! -e pager.log ] || fail "--no-pager still paged"
    grep -q 'Step 1: Input X' out || fail "no output"
    PAGER=cat on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    grep -q 'Step 1: Input X' out || fail "PAGER=cat: no output"
    PAGER= on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    grep -q 'Step 1: Input X' out || fail "PAGER empty: no output"
    [ ! -e pager.log ] || fail "an empty PAGER still paged"
    ;;
  not_a_terminal)
    PAGER=$work/bin/fake-pager "$paged" "$ATTN" explain --example seed000 --steps 1 >out 2>err
    status=$?
    [ "$status" = 0 ] || fail "exit status $status"
    [ ! -e pager.log ] || fail "paged into a pipe"
    has_escape && fail "colour in a pipe"
    grep -q 'Step 1: Input X' out || fail "no output"
    ;;
  pause_is_not_paged)
    PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1 --pause
    [ ! -e pager.log ] || fail "--pause was paged: Enter would go to the pager"
    ;;
  colour_choices_kept)
    # The user's --color and NO_COLOR win; the terminal's width becomes attn's line width.
    PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1 --color never
    has_escape && fail "--color never was overridden"
    NO_COLOR=1 PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    has_escape && fail "NO_COLOR was overridden"
    [ "$(awk '{ if (length($0) > n) n = length($0) } END { print n }' out)" -gt 75 ] ||
      fail "lines are no wider than 75: the terminal's 90 columns were not used"
    ;;
  pager_closed_early)
    # The reader leaves after one line: the command dies of SIGPIPE, which is no error.
    "$ATTN" init --d-model 64 --heads 4 --layers 2 --seq 200 -o big.json >/dev/null 2>&1 || fail "init failed"
    PAGER="$work/bin/fake-pager one-line" on_terminal "$paged" "$ATTN" explain -c big.json --threshold 100000000
    [ "$status" = 0 ] || fail "exit status $status, expected 0 after the pager closed"
    [ "$(wc -l <out)" -le 2 ] || fail "more than the pager's line came out: $(wc -l <out) lines"
    ;;
  pager_closed_early_dump)
    # The pager closes before the end, so the dump the command was asked for is never
    # written (attn died of SIGPIPE before committing it): that is an error, said once.
    "$ATTN" init --d-model 64 --heads 4 --layers 2 --seq 200 -o big.json >/dev/null 2>&1 || fail "init failed"
    PAGER="$work/bin/fake-pager one-line" on_terminal "$paged" "$ATTN" explain -c big.json --threshold 100000000 --dump d.json
    [ "$status" = 1 ] || fail "exit status $status, expected 1: the dump was never written"
    [ ! -e d.json ] || fail "d.json was written after all"
    grep -q 'scripts/paged: the pager closed before the end, so d.json was never written' out ||
      fail "no message naming d.json: $(tail -3 out)"
    # Written in full (the pager read everything), the same dump is no error.
    PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1 --dump=small.json
    [ "$status" = 0 ] || fail "exit status $status with the dump written"
    [ -f small.json ] || fail "small.json not written"
    ;;
  pager_fails)
    # A pager that cannot run (127) or fails: the lesson was not shown, so not 0.
    PAGER=$work/bin/no-such-pager on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    [ "$status" = 1 ] || fail "exit status $status, expected 1 for a missing pager"
    grep -q "scripts/paged: the pager ($work/bin/no-such-pager) failed with exit status 127" out ||
      fail "no message naming the pager: $(tail -3 out)"
    PAGER=false on_terminal "$paged" "$ATTN" explain --example seed000 --steps 1
    [ "$status" = 1 ] || fail "exit status $status, expected 1 for PAGER=false"
    # The command's own failure still wins.
    PAGER=false on_terminal "$paged" "$ATTN" explain --steps softmx
    [ "$status" = 2 ] || fail "exit status $status, expected attn's 2"
    ;;
  command_status)
    # The command's own failure is the exit status, paged or not.
    PAGER=$work/bin/fake-pager on_terminal "$paged" "$ATTN" explain --steps softmx
    [ "$status" = 2 ] || fail "exit status $status, expected attn's 2"
    "$paged" "$ATTN" explain --steps softmx >out 2>err
    status=$?
    [ "$status" = 2 ] || fail "not paged: exit status $status, expected 2"
    ;;
  *)
    fail "unknown case"
    ;;
esac
exit 0
