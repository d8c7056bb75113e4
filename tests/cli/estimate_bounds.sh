#!/usr/bin/env bash
# The memory estimate of one command's run, held to what the run takes (issue 32):
#   estimate_bounds.sh ATTN HEAP_PEAK_LIBRARY WORK_DIR ATTN_ARGS...
# 1. The run's heap (the peak of malloc's blocks in use, measured by heap_peak.cpp
#    preloaded, one thread) is at most its estimate, and the estimate at most 1.25 times it:
#    under a limit one byte below the heap the run is refused, under 1.25 times it it runs.
#    (ESTIMATE_AT_MOST=1.5: an --html page's estimate, a bound fitted to the largest pages,
#    at most 1.5 times.)
# 2. The smallest --max-memory the run passes, found by bisection over bytes between the two,
#    is the estimate its refusal names: one byte less is refused with "this run would need
#    about <that many bytes>", and at it the run goes through every other check and succeeds.
set -uo pipefail
attn=$1 peak_library=$2 work=$3
shift 3
mkdir -p "$work" && cd "$work" || exit 1
export OMP_NUM_THREADS=1

# (awk, not a Python per step: a bisection runs attn 20 times; %.17g keeps every bit)
gib() { awk -v bytes="$1" 'BEGIN { printf "%.17g\n", bytes / 1073741824 }'; }
memory_text() {  # byte_size_text(bytes, ByteStyle::Memory)
  python3 -c "
import sys
v = int(sys.argv[1]) / 1024; u = 0
while v >= 1024 and u < 2: v /= 1024; u += 1
print('%.1f %s' % (v, ['KiB', 'MiB', 'GiB'][u]))" "$1"
}
runs_under() { "$attn" "$@" >/dev/null 2>err; }

rm -f peak
if ! ATTN_HEAP_PEAK_FILE=$work/peak LD_PRELOAD=$peak_library "$attn" "$@" >/dev/null 2>err; then
  echo "FAIL: the run failed with the heap counter preloaded:" >&2
  cat err >&2
  exit 1
fi
heap=$(cat peak)
# --max-memory takes 0.000001 GiB (1074 bytes) at least: the run must need more, or there
# is no refusal to find
if ((heap <= 1074)); then
  echo "FAIL: the run's heap, $heap bytes, is under the least --max-memory takes: choose a larger run" >&2
  exit 1
fi
at_most=${ESTIMATE_AT_MOST:-1.25}
low=$((heap - 1)) high=$(python3 -c "import sys; print(int(int(sys.argv[1]) * float(sys.argv[2])))" "$heap" "$at_most")
if runs_under "$@" --max-memory "$(gib $low)"; then
  echo "FAIL: the run passes a limit under its heap of $heap bytes: its estimate is below what it takes" >&2
  exit 1
fi
if ! runs_under "$@" --max-memory "$(gib $high)"; then
  echo "FAIL: the run is refused under $at_most times its heap of $heap bytes:" >&2
  cat err >&2
  exit 1
fi
# The refusal under the heap names the estimate to 0.1 of its unit: the bisection starts
# from that bracket when the run refuses under it and passes over it (fewer runs), else from
# the heap's.
read -r near far < <(python3 -c "
import re, sys
m = re.search(r'this run would need about ([0-9.]+) (KiB|MiB|GiB) ', open('err').read())
if m:
    unit = 1024 ** {'KiB': 1, 'MiB': 2, 'GiB': 3}[m.group(2)]
    print(int((float(m.group(1)) - 0.05) * unit) - 1, int((float(m.group(1)) + 0.05) * unit) + 1)
else:
    print(0, 0)")
if ((near > low && far < high)) && ! runs_under "$@" --max-memory "$(gib $near)" &&
   runs_under "$@" --max-memory "$(gib $far)"; then
  low=$near high=$far
fi
while ((high - low > 1)); do
  middle=$(((low + high) / 2))
  if runs_under "$@" --max-memory "$(gib $middle)"; then high=$middle; else low=$middle; fi
done
estimate=$high
runs_under "$@" --max-memory "$(gib $((estimate - 1)))"
if [ $? -ne 2 ] || ! grep -q "this run would need about $(memory_text $estimate) " err; then
  echo "FAIL: one byte under the estimate ($estimate bytes, $(memory_text $estimate)) is not refused by the run's estimate:" >&2
  cat err >&2
  exit 1
fi
echo "estimate $estimate bytes, heap $heap bytes: $(python3 -c "print('%.3f' % ($estimate / $heap))")"
