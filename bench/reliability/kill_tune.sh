#!/usr/bin/env bash
# kill_tune.sh: pmtune tune killed with SIGKILL at random points, 100 times and more, on a GPU
# (tests/RELIABILITY.md, "Crashes"): after every kill `pmtune db check` passes and the count of measurements
# never goes down; at the end a run of every problem started resumes and finishes, and one more
# run of each measures nothing new. Prints one summary line; exit status 0 where all held.
#
#   cmake -S . -B build && cmake --build build -j && \
#     LD_LIBRARY_PATH=$PWD/.device/lib bench/reliability/kill_tune.sh
#
# Each killed run tunes one op (matadd, reduce, filter, add in turn) at one small size with
# --strategy random --budget $BUDGET; a size is replaced by the next (larger) one once a run of
# it finished on its own, so there is always work to kill. Delays: uniform in 0..$KILL_MAX_MS ms.
# Environment: PMTUNE (default build/tools/pmtune), KILLS (kills that must land mid-run, 100),
# KILL_MAX_MS (4000), BUDGET (24), TIME_LIMIT_S (stop killing after this long, 420), SEED
# (bash's $RANDOM seed, to replay), KEEP (a directory to keep the database and logs in).
set -u
PMTUNE=${PMTUNE:-build/tools/pmtune}
KILLS=${KILLS:-100}
KILL_MAX_MS=${KILL_MAX_MS:-4000}
BUDGET=${BUDGET:-24}
TIME_LIMIT_S=${TIME_LIMIT_S:-420}
SEED=${SEED:-$$}
RANDOM=$SEED
[ -x "$PMTUNE" ] || { echo "kill_tune: $PMTUNE: not built (cmake --build build)" >&2; exit 2; }
WORK=${KEEP:-$(mktemp -d /tmp/pmtune-kill-tune-XXXXXX)}
mkdir -p "$WORK"
DB=$WORK/pmtune.db
LOG=$WORK/run.log
echo "kill_tune: database $DB, seed $SEED, $("$PMTUNE" devices 2>&1 | sed -n 2p)"

ops=(matadd reduce filter add)
# The j-th small size of an op (j = 0, 1, ...): new problems when one is done.
size_of() {
  case $1 in
    matadd|filter) echo "$((256 + 128 * $2))x$((512 + 64 * $2))" ;;
    reduce|add) echo "$((65536 + 4096 * $2))" ;;
  esac
}
declare -A cur started
for op in "${ops[@]}"; do cur[$op]=0; done

tune_args() { # op size
  echo "tune --device 0 --op $1 --size $2 --strategy random --budget $BUDGET --samples 3 --db $DB"
}

# Sets n to the measurements db check counts; counts a failure where db check does not pass.
checks=0 check_fail=0 n=
count() {
  local out
  if ! out=$("$PMTUNE" db check --db "$DB" 2>&1); then
    echo "kill_tune: db check FAILED after kill $((mid + after)):" >&2
    echo "$out" >&2
    check_fail=$((check_fail + 1))
  fi
  checks=$((checks + 1))
  n=$(echo "$out" | sed -n 's/^measurements *\([0-9]*\).*/\1/p')
}

mid=0 after=0 runs=0 failed=0 last=0 decreased=0 t0=$SECONDS
"$PMTUNE" db init --db "$DB" >/dev/null || exit 1
while [ "$mid" -lt "$KILLS" ] && [ $((SECONDS - t0)) -lt "$TIME_LIMIT_S" ]; do
  op=${ops[$((runs % 4))]}
  size=$(size_of "$op" "${cur[$op]}")
  started[$op:$size]=1
  delay_ms=$(( (RANDOM * 32768 + RANDOM) % (KILL_MAX_MS + 1) ))
  # shellcheck disable=SC2046
  "$PMTUNE" $(tune_args "$op" "$size") >"$LOG" 2>&1 &
  pid=$!
  sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null
  { wait "$pid"; } 2>/dev/null # bash would report "Killed"
  st=$?
  runs=$((runs + 1))
  if [ "$st" -eq 137 ]; then
    mid=$((mid + 1))
  else
    after=$((after + 1))
    if [ "$st" -ne 0 ]; then
      failed=$((failed + 1))
      echo "kill_tune: pmtune $(tune_args "$op" "$size") exited with $st:" >&2
      tail -3 "$LOG" >&2
    fi
    cur[$op]=$((cur[$op] + 1)) # done with it: the next size of this op
    unset "started[$op:$size]"
  fi
  count
  if [ -z "$n" ] || [ "$n" -lt "$last" ]; then
    decreased=$((decreased + 1))
    echo "kill_tune: measurements went from $last to '${n}' after kill $((mid + after))" >&2
  fi
  last=${n:-$last}
done
killing_s=$((SECONDS - t0))

# Resume: every problem a killed run left unfinished finishes; then one more run of each
# measures nothing new.
resumed=0 resume_fail=0 again_new=0
for key in "${!started[@]}"; do
  op=${key%%:*} size=${key#*:}
  # shellcheck disable=SC2046
  if "$PMTUNE" $(tune_args "$op" "$size") >"$LOG" 2>&1; then
    resumed=$((resumed + 1))
  else
    resume_fail=$((resume_fail + 1))
    echo "kill_tune: resuming $op $size failed:" >&2
    tail -3 "$LOG" >&2
  fi
  # shellcheck disable=SC2046
  "$PMTUNE" $(tune_args "$op" "$size") >"$LOG" 2>&1 || resume_fail=$((resume_fail + 1))
  new=$(sed -n 's/.* \([0-9]*\) measured,.*/\1/p' "$LOG" | tail -1)
  [ "${new:-1}" = 0 ] || { again_new=$((again_new + 1)); echo "kill_tune: $op $size: a run after the resumed one measured '${new}'" >&2; }
done
count
final=$n
[ -n "$final" ] && [ "$final" -ge "$last" ] || decreased=$((decreased + 1))
winners=$("$PMTUNE" show --db "$DB" 2>/dev/null | grep -c . || true)

ok=1
[ "$mid" -ge "$KILLS" ] && [ "$check_fail" -eq 0 ] && [ "$decreased" -eq 0 ] && [ "$failed" -eq 0 ] &&
  [ "$resume_fail" -eq 0 ] && [ "$again_new" -eq 0 ] || ok=0
echo "kill_tune: $((mid + after)) kills in ${killing_s} s ($mid mid-run, $after after the run had finished; delays 0..${KILL_MAX_MS} ms, seed $SEED);" \
     "db check passed $((checks - check_fail)) of $checks; measurements 0 -> $final, decreased $decreased times;" \
     "runs that failed on their own $failed; resumed $resumed unfinished problems ($resume_fail failed), $again_new measured anew after;" \
     "show: $winners lines; $([ $ok = 1 ] && echo PASS || echo FAIL)"
[ -z "${KEEP:-}" ] && [ $ok = 1 ] && rm -rf "$WORK"
[ $ok = 1 ]
