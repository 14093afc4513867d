#!/usr/bin/env bash
# run.sh: compute-sanitizer's memcheck (API errors and leaks included), racecheck, synccheck and
# initcheck, each with --error-exitcode 1, on pmtune_sanitize_calls (every op at odd sizes, cold,
# warm, in a graph; bench/sanitize/calls.c), on test_gpu_nan (NaN and Inf through every call) and
# on a short tuning run of each op; each run's
# output goes to the folder OUT, and one summary line per (tool, program) to stdout and to
# OUT/summary.txt.
# Usage, from the repository root with the build in build/:
#   bench/sanitize/run.sh OUT
# Environment: RUN_TIMEOUT (seconds one sanitized run may take; default 240).
# On an H100 the whole script should take a few minutes; each run's time is printed.
set -uo pipefail
out=${1:?usage: bench/sanitize/run.sh OUT}
bin=${BUILD:-build}/tools
limit=${RUN_TIMEOUT:-240}
mkdir -p "$out"

cs=$(command -v compute-sanitizer || true)
for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /usr/local/cuda-*/bin; do
  [ -z "$cs" ] && [ -x "$d/compute-sanitizer" ] && cs=$d/compute-sanitizer
done
if [ -z "$cs" ]; then
  echo "run.sh: compute-sanitizer is neither in PATH nor in /usr/local/cuda/bin" >&2
  exit 1
fi
for b in pmtune pmtune_sanitize_calls; do
  [ -x "$bin/$b" ] || { echo "run.sh: $bin/$b is not built" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null |
      sed 's/, /, driver /' || echo "GPU unknown")
commit=${PM_COMMIT:-$(git describe --always --dirty 2>/dev/null || echo "commit unknown")}
head="$("$cs" --version | tail -1); $gpu; build of $commit"
now() { date +%s.%N; }

# The programs, by name: small sizes, few points (a sanitized kernel runs 10-100x slower).
programs=(calls nan tune-matadd tune-reduce tune-filter tune-add)
command_of() { # program tool -> the command line, with its own fresh database
  local db="$tmp/$2-$1.db" tune=("$bin/pmtune" tune --device 0 --strategy random --budget 4 --samples 2)
  case $1 in
    calls) echo "$bin/pmtune_sanitize_calls $db" ;;
    nan) echo "${BUILD:-build}/tests/test_gpu_nan --jobs 1" ;; # NaN and Inf through every call
    tune-matadd) echo "${tune[*]} --op matadd --size 67x45 --order col --db $db" ;;
    tune-reduce) echo "${tune[*]} --op reduce --size 10007 --db $db" ;;
    tune-filter) echo "${tune[*]} --op filter --size 61x37 --radius 2 --border zero --db $db" ;;
    tune-add) echo "${tune[*]} --op add --size 10007 --db $db" ;;
  esac
}
tool_options() {
  case $1 in
    memcheck) echo "--tool memcheck --report-api-errors all --leak-check full" ;;
    *) echo "--tool $1" ;;
  esac
}

summary=$out/summary.txt
echo "# bench/sanitize/run.sh $out; $head" > "$summary"
printf '%-10s %-12s %8s %8s %6s %8s\n' tool program errors warnings exit seconds | tee -a "$summary"
t0=$(now)
# the four tools at once, each over the programs in turn (a run is mostly host time under the
# sanitizer, and the device has room for four); each tool's lines are gathered in order after
run_tool() {
  local tool=$1 worst=0
  for prog in "${programs[@]}"; do
    log=$out/$tool-$prog.txt
    cmd="$cs $(tool_options "$tool") --error-exitcode 1 $(command_of "$prog" "$tool")"
    t=$(now)
    { echo "# $cmd; $head"; timeout "$limit" $cmd 2>&1; } > "$log"
    rc=$?
    secs=$(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }')
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
    warnings=-
    hazards=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\1 \2/p' "$log" | tail -1)
    if [ -n "$hazards" ]; then
      [ -z "$errors" ] || [ "${hazards% *}" -gt "$errors" ] && errors=${hazards% *}
      warnings=${hazards#* }
    fi
    printf '%-10s %-12s %8s %8s %6s %8s\n' "$tool" "$prog" "${errors:-?}" "$warnings" "$rc" "$secs"
    [ "$rc" != 0 ] && worst=1
  done
  return $worst
}
pids=()
for tool in memcheck racecheck synccheck initcheck; do
  run_tool "$tool" > "$tmp/lines-$tool" & pids+=($!)
done
worst=0
for p in "${pids[@]}"; do wait "$p" || worst=1; done
cat "$tmp"/lines-memcheck "$tmp"/lines-racecheck "$tmp"/lines-synccheck "$tmp"/lines-initcheck |
  tee -a "$summary"
echo "total $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s; logs in $out" | tee -a "$summary"
exit "$worst"
