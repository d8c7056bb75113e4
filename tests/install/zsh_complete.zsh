#!/usr/bin/env zsh
# Prints what zsh's completion offers at the end of a command line, one match a line, as
# an interactive zsh would show them after TAB: the shell runs in a pseudo-terminal
# (zsh/zpty), with compinit and FPATH_DIR first in $fpath; compadd is wrapped so that each
# match it adds is also printed. For scripts/test-install.
#
#   zsh -f tests/install/zsh_complete.zsh FPATH_DIR 'attn explain --color '
emulate -L zsh
zmodload zsh/zpty || exit 2
fpath_dir=$1 line=$2

zpty shell zsh -f -i
# One setting a line; each is echoed back by the terminal, which the reading below skips.
zpty -w shell "PROMPT= RPROMPT= PS2="
zpty -w shell "fpath=(${(q)fpath_dir} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w shell "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
# -O/-A/-D only ask compadd which words would match (no match is added): passed through.
zpty -w shell 'compadd() { if [[ " $* " == *" -"[OAD]" "* ]]; then builtin compadd "$@"; return; fi; local -a __hits; builtin compadd -A __hits "$@"; print -rl -- ${__hits/#/MATCH:}; builtin compadd "$@"; }'
zpty -w shell "comppostfuncs=(exit)"
zpty -w shell "bindkey '^I' complete-word"
zpty -w shell "print READY"
zpty -w -n shell "$line"$'\t'

typeset -a matches
ready=0
# The shell exits once the completion is done (comppostfuncs), which ends the reading; a
# match printed right after the echoed command line shares its line.
while zpty -r shell out; do
  out=${out//[$'\r\n']/}
  [[ $out == READY ]] && ready=1
  (( ready )) && [[ $out == *MATCH:* ]] && matches+=(${out##*MATCH:})
done
zpty -d shell 2>/dev/null
print -rl -- ${(u)matches}
