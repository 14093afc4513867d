#!/bin/bash
# fleet.sh: the fleet recipe (docs/serving.md, "A fleet"): submits tune.sbatch once for each GPU
# model that MODELS lists, a job of its own with that model's sbatch options, so that each lands on
# a node of its model (each checks that it did, tunes its node's GPUs into a database of its own
# and exports it into the shared folder as exports/MODEL-JOBID.json), and merge.sbatch after them
# all (imports exactly those exports into one database, checks it, and exports the merged
# results where every node's programs read them: PMTUNE_RESULTS=DIR/results).
# Usage: examples/slurm/fleet.sh DIR MODELS
#   DIR: a folder every node sees (exports/, logs/, merged.db and results/ go there)
#   MODELS: a file, a line a model: its name as `pmtune devices` prints it, '|', the sbatch
#   options that land a job on a node of that model (a feature, a GPU type, a partition:
#   examples/slurm/models.txt). One job a model, not an array job: every task of an array has
#   the same options, so none can pick its task's model (and --nodelist gives each task every
#   node it lists: they all run on the first).
# Environment: PMTUNE (the pmtune command; default: the one in PATH). Prints each model's job id
# and the merge's; a model's job that fails (on a node of another model, say) cancels the merge.
set -euo pipefail
usage="usage: fleet.sh DIR MODELS"
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$2" ] && [ -r "$2" ] || { echo "fleet.sh: cannot read MODELS '$2'" >&2; exit 2; }

# Every line read and checked before anything is submitted.
models=() options=() names=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  case $line in '' | '#'*) continue ;; esac
  case $line in *'|'*) ;; *) echo "fleet.sh: $2:$lineno: no '|' between the model and its sbatch options" >&2; exit 2 ;; esac
  model=$(printf '%s\n' "${line%%|*}" | sed -e 's/^ *//' -e 's/ *$//')
  opts=${line#*|}
  [ -n "$model" ] || { echo "fleet.sh: $2:$lineno: no model before '|'" >&2; exit 2; }
  [ -n "${opts// /}" ] || { echo "fleet.sh: $2:$lineno: no sbatch options to land on '$model'" >&2; exit 2; }
  # The export's name: the model's, lower case, each run of other characters one '-'
  # ("NVIDIA H100 80GB HBM3": nvidia-h100-80gb-hbm3, as results/ names its files).
  name=$(printf '%s\n' "$model" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
  for n in "${names[@]}"; do
    [ "$n" != "$name" ] || { echo "fleet.sh: $2:$lineno: '$model' listed twice (one job a model)" >&2; exit 2; }
  done
  models+=("$model") options+=("$opts") names+=("$name")
done < "$2"
[ ${#models[@]} -gt 0 ] || { echo "fleet.sh: $2 lists no model" >&2; exit 2; }

dir=$(mkdir -p "$1" && cd "$1" && pwd)
mkdir -p "$dir/exports" "$dir/logs"
export PMTUNE_FLEET_DIR=$dir PMTUNE=${PMTUNE:-pmtune}
jobs=() exports=()
cancel() { # a submission failed: nothing of this run is left to run
  [ ${#jobs[@]} -eq 0 ] || scancel "${jobs[@]}" || true
  echo "fleet.sh: $1" >&2
  exit 1
}
for i in "${!models[@]}"; do
  read -r -a opts <<< "${options[i]}"
  id=$(PMTUNE_FLEET_MODEL=${models[i]} PMTUNE_FLEET_NAME=${names[i]} \
    sbatch --parsable --export=ALL --job-name="pmtune-tune-${names[i]}" \
    --output="$dir/logs/tune-${names[i]}-%j.out" "${opts[@]}" "$here/tune.sbatch") ||
    cancel "sbatch failed for '${models[i]}'"
  id=${id%%;*}
  jobs+=("$id") exports+=("${names[i]}-$id.json")
  echo "tuning ${models[i]}: job $id"
done
after=$(IFS=:; echo "${jobs[*]}")
merge=$(PMTUNE_FLEET_EXPORTS=${exports[*]} sbatch --parsable --export=ALL \
  --dependency=afterok:"$after" --kill-on-invalid-dep=yes --output="$dir/logs/merge-%j.out" \
  "$here/merge.sbatch") || cancel "sbatch failed for merge.sbatch"
echo "merging: job ${merge%%;*} (after every tuning job succeeds)"
