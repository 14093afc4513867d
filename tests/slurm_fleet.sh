#!/bin/bash
# slurm_fleet.sh: CTest's slurm_fleet: the fleet recipe (examples/slurm) on a real single-node
# Slurm started here on localhost (munged, slurmctld and slurmd, all in a temporary folder), with
# no GPU: each of 3 array tasks fabricates a database of its own GPU model (a stand-in for pmtune
# tune), the merge job imports the exports and writes results/fleet.json (a folder programs read
# with PMTUNE_RESULTS, as test_serve_decide checks for such documents), which must hold every
# model and every winner, and merged.db, which must pass db check. Skips (status 77, with the
# reason) where Slurm cannot start: not root, Slurm or munge not installed, the node not up.
# Usage: tests/slurm_fleet.sh SOURCE_DIR PMTUNE_BIN
set -uo pipefail
src=$1
pmtune=$2
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in "$tmp"/*.log "$tmp"/fleet/logs/*; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }
[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
for b in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$b" > /dev/null || [ -x "/usr/sbin/$b" ] || skip "$b is not installed (Debian: slurmctld slurmd slurm-client munge)"
done
export PATH=$PATH:/usr/sbin
tmp=$(mktemp -d /tmp/pmtune-slurm-XXXXXX)
chmod 755 "$tmp"
cleanup() {
  for p in slurmd slurmctld munged; do [ -f "$tmp/$p.pid" ] && kill "$(cat "$tmp/$p.pid")" 2> /dev/null; done
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

mkdir -p "$tmp/state" "$tmp/spool"
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
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
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
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -c > "$tmp/slurmctld.out" 2>&1 || skip "slurmctld did not start: $(tail -2 "$tmp/slurmctld.log" 2> /dev/null)"
slurmd -N "$host" > "$tmp/slurmd.out" 2>&1 || skip "slurmd did not start: $(tail -2 "$tmp/slurmd.log" 2> /dev/null)"
for i in $(seq 60); do
  state=$(sinfo -h -N -o %t 2> /dev/null | head -1)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || skip "the node did not come up in 60 s (state '$state'): $(tail -2 "$tmp/slurmd.log" 2> /dev/null)"

# each task fabricates the database of its own model: the H100's shipped results, renamed (each
# of their GPUs keeping a UUID of its own: the file holds those of two H100s)
cat > "$tmp/fabricate.sh" << 'FAB'
#!/bin/sh
set -e
k=${SLURM_ARRAY_TASK_ID:?}
gzip -dc "$PMTUNE_FLEET_SRC/results/nvidia-h100-80gb-hbm3.json.gz" |
  sed -e "s/NVIDIA H100 80GB HBM3/Fake GPU model $k/g" -e "s/GPU-\([0-9a-f]\{8\}\)-[0-9a-f-]*\"/GPU-fake-000$k-\1\"/g" > "$1.json"
"$PMTUNE" import "$1.json" --db "$1"
rm -f "$1.json"
FAB
export PMTUNE=$pmtune PMTUNE_FLEET_SRC=$src PMTUNE_FLEET_TUNE="sh $tmp/fabricate.sh" TMPDIR=$tmp
out=$("$src/examples/slurm/fleet.sh" "$tmp/fleet" 3 --ntasks=1) || fail "fleet.sh: $out"
echo "$out"
merge=$(echo "$out" | sed -n 's/.*merging: job \([0-9]*\).*/\1/p')
[ -n "$merge" ] || fail "no merge job id in: $out"
for i in $(seq 120); do
  state=$(scontrol show job "$merge" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
  sleep 1
done
[ "$state" = COMPLETED ] || fail "the merge job ended $state"
fleet=$tmp/fleet/results/fleet.json
models=$(grep -o '"name":"Fake GPU model [0-9]"' "$fleet" | sort -u | wc -l)
[ "$models" = 3 ] || fail "fleet.json names $models models, not 3"
per=$(gzip -dc "$src/results/nvidia-h100-80gb-hbm3.json.gz" | grep -c '"gpu":"')
rows=$(grep -c '"gpu":"GPU-fake' "$fleet")
[ "$rows" = $((3 * per)) ] || fail "fleet.json holds $rows winners, not 3 x $per"
"$pmtune" db check --db "$tmp/fleet/merged.db" > "$tmp/check.log" 2>&1 || fail "db check of merged.db"
echo "PASS: 3 array tasks exported, merged: $models models, $rows winners in $fleet; merged.db checks"
