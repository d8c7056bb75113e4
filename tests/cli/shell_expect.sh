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
