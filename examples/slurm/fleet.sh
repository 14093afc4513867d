#!/bin/bash
# fleet.sh: the fleet recipe (docs/serving.md, "A fleet"): submits tune.sbatch as an array job, one task a
# node (each tunes its node's GPUs into a database of its own and exports it into a shared
# folder), and merge.sbatch after it (imports every export into one database, checks it, and
# exports the merged results where every node's programs read them: PMTUNE_RESULTS=DIR/results).
# Usage: examples/slurm/fleet.sh DIR TASKS [sbatch options for the tuning tasks...]
#   DIR: a folder every node sees (exports/, merged.db and results/ go there)
#   TASKS: how many array tasks (nodes to tune: one of each GPU model, or all of them)
#   the options: where to run, e.g. --partition=gpu --gres=gpu:1 (default --gres=gpu:1
#   --exclusive); not --nodelist, which gives every task of the array every node it lists
# Environment: PMTUNE (the pmtune command; default: the one in PATH). Prints the two job ids.
set -euo pipefail
dir=${1:?usage: fleet.sh DIR TASKS [sbatch options...]}
tasks=${2:?usage: fleet.sh DIR TASKS [sbatch options...]}
shift 2
[ $# -gt 0 ] || set -- --gres=gpu:1 --exclusive
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
mkdir -p "$dir/exports" "$dir/logs"
export PMTUNE_FLEET_DIR=$dir PMTUNE=${PMTUNE:-pmtune}
tune=$(sbatch --parsable --export=ALL --array=0-$((tasks - 1)) --output="$dir/logs/tune-%A_%a.out" \
  "$@" "$here/tune.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency=afterok:"${tune%%;*}" \
  --output="$dir/logs/merge-%j.out" "$here/merge.sbatch")
echo "tuning: job ${tune%%;*} ($tasks tasks); merging: job ${merge%%;*} (after every task succeeds)"
