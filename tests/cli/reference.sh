#!/usr/bin/env bash
# Tests of the man page and the shell completions that attn writes from its own command
# line (src/cli/reference.h), checked against what --help lists. scripts/test-install
# checks the installed files again, through man -l and a real zsh.
#
#   reference.sh CASE ATTN SOURCE_DIR WORK_DIR
set -uo pipefail
case_name=$1
ATTN=$2
source_dir=$3
work=$4/$case_name
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
commands=$("$ATTN" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$commands" ] || fail "attn --help lists no subcommand"
# roff NAME: an option as the man page writes it, \fB\-\-config\fR
roff() { printf '\\fB%s\\fR' "$(sed 's/-/\\-/g' <<<"$1")"; }

case $case_name in
  man_page_lists_every_option)
    "$ATTN" --man-page >attn.1 || fail "attn --man-page failed"
    head -2 attn.1 | grep -q '^\.TH ATTN 1 "" "attn 0\.1\.0" "User Commands"$' || fail "no .TH line: $(head -2 attn.1)"
    for command in $commands; do
      section=$(awk -v head=".SS \"attn $command\"" '$0 == head { on = 1; next } /^\.S[SH] / { on = 0 } on' attn.1)
      [ -n "$section" ] || fail "no section .SS \"attn $command\""
      # the description --help gives the subcommand is the section's first line
      description=$("$ATTN" --help | awk -v c="$command" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
      grep -qF -- "$description" <<<"$section" || fail "attn $command: the description differs from --help's"
      for option in $("$ATTN" "$command" --help | grep -oE '^  (-[a-zA-Z],)?--?[a-zA-Z][a-zA-Z-]*' | sed 's/^ *//; s/,/ /'); do
        grep -qF -- "$(roff "$option")" <<<"$section" || fail "attn $command: no $option in the man page"
      done
      for positional in $("$ATTN" "$command" --help | sed -n '/^Positionals:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
        grep -qF -- "\\fI$positional\\fR" <<<"$section" || fail "attn $command: no $positional in the man page"
      done
    done
    # and the man page has no subcommand --help does not list
    for listed in $(sed -n 's/^\.SS "attn \(.*\)"$/\1/p' attn.1); do
      grep -qx "$listed" <<<"$commands" || fail "the man page has attn $listed, which --help does not list"
    done
    ;;
  bash_completion)
    "$ATTN" --completion bash >attn.bash || fail "attn --completion bash failed"
    bash -n attn.bash || fail "the bash completion does not parse"
    complete_bash() {
      (cd "$source_dir" && bash --norc -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _attn; (( ${#COMPREPLY[@]} )) && printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort; true' \
        _ "$work/attn.bash" "$@") | tr '\n' ' '
    }
    expect() {
      local want=$1 got
      shift
      got=$(complete_bash "$@")
      [ "$got" = "$want" ] || fail "completing '$*' gave '$got', expected '$want'"
    }
    expect "$(printf '%s\n' $commands | LC_ALL=C sort | tr '\n' ' ')" attn ''
    expect 'always auto never ' attn explain --color ''
    expect 'always ' attn explain --color = al
    expect 'seed004_i_love_ai ' attn explain --example seed004
    expect 'softmax ' attn explain --steps sof
    expect '--head --heatmap --help ' attn explain --he
    expect '' attn explain --head ''
    expect 'data/examples/trained_translate.json ' attn validate data/examples/trained_tr
    ;;
  zsh_completion)
    "$ATTN" --completion zsh >_attn || fail "attn --completion zsh failed"
    head -1 _attn | grep -qx '#compdef attn' || fail "no #compdef line"
    for command in $commands; do
      grep -q "^        $command)$" _attn || fail "no case for attn $command"
    done
    grep -qF "'(-e --example -c --config --model)'{-e,--example}" _attn || fail "--example does not exclude -c and --model"
    grep -qF ':TEXT:(auto always never)' _attn || fail "--color's values are missing"
    if command -v zsh >/dev/null; then zsh -n _attn || fail "the zsh completion does not parse"; fi
    ;;
  *)
    fail "unknown case"
    ;;
esac
exit 0
