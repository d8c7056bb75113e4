# The expectations the shell-driven CLI tests share (hostile.sh, hostile_folders.sh).
# The sourcing script sets $case_name, runs a command with stdout in ./out and stderr in
# ./err, and keeps its exit code in $status.
fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
# expect_status CODE: the exit code of the last command ($status) is CODE.
expect_status() { [ "$status" = "$1" ] || fail "exit code $status, expected $1; stderr: $(cat err 2>/dev/null)"; }
expect_stderr() { grep -qxF -- "$1" err || fail "stderr is not the line '$1': $(cat err)"; }
one_line_stderr() { [ "$(wc -l <err)" = 1 ] || fail "stderr has $(wc -l <err) lines: $(cat err)"; }
# Nothing but the files named is left in the folder (no dump, no .*.tmp-* file).
expect_files() {
  local found
  found=$(ls -A | grep -vxE 'err|out' | sort | tr '\n' ' ')
  [ "$found" = "$*" ] || fail "files left: '$found', expected '$*'"
}
# cpu_ms_now VAR: sets VAR to the CPU time, user and system, in milliseconds, of every
# command this shell has run and waited for (`times`, run in this shell: a command
# substitution's shell has no children of its own). A time limit held to it holds on a
# machine busy with other tests, where a sanitized build's wall clock can double.
cpu_ms_now() {
  local file
  file=$(mktemp) || fail "mktemp"
  times >"$file"
  printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); sub("s", "", u[2]); sub("s", "", s[2]);
                                        printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$file")"
  rm -f "$file"
}
