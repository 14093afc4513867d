#!/bin/bash
# slurm_fleet.sh: CTest's slurm_fleet: the fleet recipe (examples/slurm) on a real Slurm started
# here on localhost (munged, slurmctld and three slurmd, all in a temporary folder), whose nodes
# gpu1, gpu2 and gpu3 each hold a GPU of a model of their own (node features model1 to model3),
# with no GPU: PMTUNE is a stand-in whose `devices` lists the node's model and whose `tune`
# fabricates a database of it (the H100's shipped results, renamed); any other command is the
# real pmtune's. It checks that
#   - each model's job ran on its model's node, a job of its own (an array job given --nodelist
#     fails: every task gets every node listed and runs on the first), and exported
#     exports/MODEL-JOBID.json, which names that model alone;
#   - the merge took this run's exports and no other: results/fleet.json holds the three models
#     and every winner of each, nothing of the stale exports an earlier run left in exports/ (one
#     of them named with a job id of this run), and merged.db passes db check;
#   - a model whose sbatch options land on another model's node is refused: its job fails and
#     exports nothing, and the merge is cancelled;
#   - a merge that finds no export of its run fails and says "no exports".
# Skips (status 77, with the reason) where Slurm cannot start: not root, Slurm or munge not
# installed, the nodes not up.
# Usage: tests/slurm_fleet.sh SOURCE_DIR PMTUNE_BIN
set -uo pipefail
src=$1
pmtune=$2
skip() { echo "SKIP: $*"; exit 77; }
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log "$tmp"/*/logs/* "$tmp"/none/*.out; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
  exit 1
}
[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
for b in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
  command -v "$b" > /dev/null || [ -x "/usr/sbin/$b" ] || skip "$b is not installed (Debian: slurmctld slurmd slurm-client munge)"
done
export PATH=$PATH:/usr/sbin
tmp=$(mktemp -d /tmp/pmtune-slurm-XXXXXX)
chmod 755 "$tmp"
nodes="gpu1 gpu2 gpu3"
cleanup() {
  # Jobs still running (a failed check ends the test early) are cancelled first: their slurmstepd
  # would outlive slurmd. Only this test's Slurm is asked.
  if [ "${SLURM_CONF:-}" = "$tmp/slurm.conf" ] && [ -n "$(squeue -h -o %i 2> /dev/null)" ]; then
    scancel --full --user="$(id -un)" 2> /dev/null
    for _ in $(seq 10); do [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break; sleep 1; done
  fi
  for p in slurmd-gpu1 slurmd-gpu2 slurmd-gpu3 slurmctld munged; do
    [ -f "$tmp/$p.pid" ] && kill "$(cat "$tmp/$p.pid")" 2> /dev/null
  done
  sleep 1
  rm -rf "$tmp"
}
trap cleanup EXIT
host=$(hostname -s)
cpus=$(nproc)
port=$((20000 + $$ % 20000))

# munge, with a key and a socket of its own
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2> /dev/null && chmod 400 "$tmp/munge.key"
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge.seed" ||
  skip "munged did not start: $(tail -1 "$tmp/munged.log" 2> /dev/null)"

# Three nodes on this host, a slurmd each (%n: the node's name), job ids from 100.
mkdir -p "$tmp/state" "$tmp/spool/gpu1" "$tmp/spool/gpu2" "$tmp/spool/gpu3"
cat > "$tmp/slurm.conf" << CONF
ClusterName=pmtunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
FirstJobId=100
NodeName=gpu1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=$cpus Features=model1 State=UNKNOWN
NodeName=gpu2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 3)) CPUs=$cpus Features=model2 State=UNKNOWN
NodeName=gpu3 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 4)) CPUs=$cpus Features=model3 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -c > "$tmp/slurmctld.out" 2>&1 || skip "slurmctld did not start: $(tail -2 "$tmp/slurmctld.log" 2> /dev/null)"
for n in $nodes; do
  slurmd -N "$n" > "$tmp/slurmd-$n.out" 2>&1 || skip "slurmd $n did not start: $(tail -2 "$tmp/slurmd-$n.log" 2> /dev/null)"
done
for _ in $(seq 60); do
  idle=$(sinfo -h -N -o %t 2> /dev/null | grep -c '^idle$')
  [ "$idle" = 3 ] && break
  sleep 1
done
[ "$idle" = 3 ] || skip "the nodes did not come up in 60 s ($(sinfo -h -N -o '%N %t' 2> /dev/null | paste -s -d' ' -)): $(tail -2 "$tmp/slurmd-gpu1.log" 2> /dev/null)"

# The models: each node's, and the name of its export (fleet.sh's rule). The third is wider
# than `pmtune devices`' name column and holds a number like a compute capability.
model=("" "Fake GPU model 1" "Fake GPU model 2" "Fake GPU 3.0 model 3, a name wider than the column")
slug=("" fake-gpu-model-1 fake-gpu-model-2 fake-gpu-3-0-model-3-a-name-wider-than-the-column)
printf 'gpu1|%s\ngpu2|%s\ngpu3|%s\n' "${model[1]}" "${model[2]}" "${model[3]}" > "$tmp/node-models"

# fabricate MODEL TAG: an export document of MODEL, its GPUs' UUIDs GPU-TAG-...: the H100's
# shipped results renamed (each GPU keeping a UUID of its own: the file holds those of six H100s).
cat > "$tmp/fabricate" << FAB
#!/bin/sh
gzip -dc "$src/results/nvidia-h100-80gb-hbm3.json.gz" |
  sed -e "s/NVIDIA H100 80GB HBM3/\$1/g" -e "s/GPU-\\([0-9a-f]\\{8\\}\\)-[0-9a-f-]*\"/GPU-\$2-\\1\"/g"
FAB
chmod 755 "$tmp/fabricate"

# The stand-in for pmtune on the nodes, from the node's name (SLURMD_NODENAME).
cat > "$tmp/pmtune" << 'FAKE'
#!/bin/bash
# the test's pmtune: `devices` and `tune` as on a node with one GPU of its model; else the real one
model=$(sed -n "s/^${SLURMD_NODENAME:-none}|//p" "$PMTUNE_TEST_DIR/node-models")
case $1 in
devices)
  [ -n "$model" ] || { echo "pmtune devices: no CUDA device" >&2; exit 1; }
  printf "%-5s  %-28s  %-5s  %4s  %10s  %9s  %9s  %9s\n" index name cc SMs memory bus "mem clock" "peak GB/s"
  printf "%-5d  %-28s  %d.%-3d  %4d  %6.1f GiB  %5d-bit  %5d MHz  %9.0f\n" 0 "$model" 9 0 132 79.2 5120 2619 3352
  ;;
tune)
  [ -n "$model" ] || { echo "pmtune tune: no CUDA device" >&2; exit 1; }
  db=
  while [ $# -gt 0 ]; do [ "$1" = --db ] && db=$2; shift; done
  "$PMTUNE_TEST_DIR/fabricate" "$model" "fake-$SLURMD_NODENAME" > "$db.json" && "$PMTUNE_TEST_REAL" import "$db.json" --db "$db"
  status=$?
  rm -f "$db.json"
  exit $status
  ;;
*) exec "$PMTUNE_TEST_REAL" "$@" ;;
esac
FAKE
chmod 755 "$tmp/pmtune"
export PMTUNE=$tmp/pmtune PMTUNE_TEST_REAL=$pmtune PMTUNE_TEST_DIR=$tmp TMPDIR=$tmp

job_state() { scontrol show job -o "$1" 2> /dev/null | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p'; }
job_node() { scontrol show job -o "$1" 2> /dev/null | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p'; }
# The state job $1 ends in, waiting up to 180 s (else the state it is in).
wait_job() {
  local state
  for _ in $(seq 180); do
    state=$(job_state "$1")
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    sleep 1
  done
  echo "$state"
}
# The job fleet.sh's output $1 says tunes model $2.
tuning_job() { printf '%s\n' "$1" | sed -n "s/^tuning $2: job \([0-9]*\)$/\1/p"; }

# 1. The fleet of three models, in a folder where an earlier run left exports: one of a model
# this run has not (in the old recipe's name form), one named with this run's first job id.
fleet=$tmp/fleet
mkdir -p "$fleet/exports"
"$tmp/fabricate" "Fake GPU model 9" stale > "$fleet/exports/oldhost-0.json"
ln "$fleet/exports/oldhost-0.json" "$fleet/exports/fake-gpu-model-9-100.json"
touch -d '2 days ago' "$fleet/exports/oldhost-0.json"
cat > "$tmp/models" << MODELS
# the test's models: a node each
${model[1]} | --constraint=model1 --ntasks=1
${model[2]} | --constraint=model2 --ntasks=1
${model[3]} | --constraint=model3 --ntasks=1
MODELS
out=$("$src/examples/slurm/fleet.sh" "$fleet" "$tmp/models") || fail "fleet.sh: $out"
echo "$out"

# 2. A fleet whose second model's options land on the third model's node.
wrong=$tmp/wrong
cat > "$tmp/wrong-models" << MODELS
${model[1]} | --constraint=model1 --ntasks=1
${model[2]} | --constraint=model3 --ntasks=1
MODELS
out2=$("$src/examples/slurm/fleet.sh" "$wrong" "$tmp/wrong-models") || fail "fleet.sh (wrong): $out2"
echo "$out2"

# 3. A merge whose run's exports are not there, only an earlier run's.
mkdir -p "$tmp/none/exports"
ln "$fleet/exports/oldhost-0.json" "$tmp/none/exports/oldhost-0.json"
none=$(PMTUNE_FLEET_DIR=$tmp/none PMTUNE_FLEET_EXPORTS="fake-gpu-model-1-99.json" \
  sbatch --parsable --export=ALL --output="$tmp/none/merge.out" "$src/examples/slurm/merge.sbatch") ||
  fail "sbatch merge.sbatch: $none"

# No job of either run is an array job given nodes by name.
arrays=$(scontrol show job -o 2> /dev/null | grep 'ArrayJobId=' | grep -v 'ReqNodeList=(null)' |
  sed -n 's/^JobId=\([0-9]*\) .* ReqNodeList=\([^ ]*\) .*/job \1, an array task, --nodelist=\2/p')
[ -z "$arrays" ] || fail "an array job with --nodelist gives every task every node listed: $arrays"

# 1: each model's job on its node, exporting under its model's name that model alone; the merge
# of exactly those.
merge=$(printf '%s\n' "$out" | sed -n 's/^merging: job \([0-9]*\) .*/\1/p')
[ -n "$merge" ] || fail "no merge job id in: $out"
state=$(wait_job "$merge")
for k in 1 2 3; do
  job=$(tuning_job "$out" "${model[k]}")
  [ -n "$job" ] || fail "fleet.sh names no job tuning '${model[k]}': $out"
  s=$(wait_job "$job")
  [ "$s" = COMPLETED ] || fail "the job tuning '${model[k]}' ended $s"
  node=$(job_node "$job")
  [ "$node" = "gpu$k" ] || fail "the job tuning '${model[k]}' ran on $node, not gpu$k"
  export=$fleet/exports/${slug[k]}-$job.json
  [ -f "$export" ] || fail "no $export: $(ls "$fleet/exports")"
  names=$(grep -o '"name":"[^"]*"' "$export" | sort -u)
  [ "$names" = "\"name\":\"${model[k]}\"" ] || fail "$export names $names, not '${model[k]}' alone"
done
[ "$state" = COMPLETED ] || fail "the merge job ended $state"
results=$fleet/results/fleet.json
models=$(grep -o '"name":"Fake GPU [^"]*"' "$results" | sort -u | wc -l)
[ "$models" = 3 ] || fail "fleet.json names $models models, not 3: $(grep -o '"name":"[^"]*"' "$results" | sort -u)"
grep -q 'GPU-stale' "$results" && fail "fleet.json holds the stale exports' GPUs: the merge took an earlier run's exports"
# the merge holds every row of the three exports: each node's export of the (fabricated) tuning
sum=0
for k in 1 2 3; do
  n=$(grep -c '"gpu":"GPU-fake' "$fleet/exports/${slug[k]}-$(tuning_job "$out" "${model[k]}").json")
  [ "$n" -gt 1000 ] || fail "the export of '${model[k]}' holds $n rows"
  sum=$((sum + n))
done
rows=$(grep -c '"gpu":"GPU-fake' "$results")
[ "$rows" = "$sum" ] || fail "fleet.json holds $rows rows, not the $sum of the three exports"
"$pmtune" db check --db "$fleet/merged.db" > "$tmp/check.log" 2>&1 || fail "db check of merged.db"
grep -q 'left out 2 other exports' "$fleet/logs/merge-$merge.out" ||
  fail "the merge does not say it left out the 2 stale exports: $(cat "$fleet/logs/merge-$merge.out")"

# 2: the misplaced job refused, nothing exported under its name or its node's, the merge cancelled.
good=$(tuning_job "$out2" "${model[1]}")
bad=$(tuning_job "$out2" "${model[2]}")
merge2=$(printf '%s\n' "$out2" | sed -n 's/^merging: job \([0-9]*\) .*/\1/p')
[ -n "$good" ] && [ -n "$bad" ] && [ -n "$merge2" ] || fail "fleet.sh (wrong) names not 3 jobs: $out2"
s=$(wait_job "$bad")
[ "$s" = FAILED ] || fail "the job for '${model[2]}' on gpu3 ended $s, not FAILED (refused)"
grep -q "refused: .*'${model[3]}'" "$wrong/logs/tune-${slug[2]}-$bad.out" ||
  fail "the misplaced job does not say it refused: $(cat "$wrong/logs/tune-${slug[2]}-$bad.out")"
s=$(wait_job "$good")
[ "$s" = COMPLETED ] || fail "the job for '${model[1]}' ended $s"
s=$(wait_job "$merge2")
[ "$s" = CANCELLED ] || fail "the merge after a refused job ended $s, not CANCELLED"
for f in "$wrong"/exports/*; do
  [ "$f" = "$wrong/exports/${slug[1]}-$good.json" ] || fail "the misplaced job exported: $(ls "$wrong/exports")"
done
[ -e "$wrong/results/fleet.json" ] && fail "a fleet.json was written after a refused job"

# 3: no exports of the run: a failure that says so.
s=$(wait_job "$none")
[ "$s" = FAILED ] || fail "a merge with no exports of its run ended $s, not FAILED"
grep -q "no exports of this run" "$tmp/none/merge.out" ||
  fail "a merge with no exports of its run does not say so: $(cat "$tmp/none/merge.out")"
[ -e "$tmp/none/results/fleet.json" ] && fail "a merge with no exports wrote fleet.json"

echo "PASS: 3 models tuned on their nodes, one job each, merged without the 2 stale exports:" \
  "$models models, $rows winners in $results; merged.db checks; a misplaced job refused, its" \
  "merge cancelled; a merge without exports failed, saying so"
