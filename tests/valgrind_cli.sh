#!/bin/sh
# valgrind_cli.sh: runs the pmtune command's CPU paths under valgrind: space, compile
# (one small variant: NVRTC under valgrind takes a while), db init and check, import, show,
# export and explain on a fabricated database. Fails on any valgrind error or leak
# (--error-exitcode=99, --leak-check=full: definite and possible leaks are errors), or where a
# step ends other than as it must. No suppressions are needed: neither CUDA's static runtime
# (failing to find a driver here, or finding one) nor NVRTC gives valgrind 3.19 an error or a
# definite or possible leak on these paths; what they keep to the end is "still reachable",
# which is not an error. Also space --kernel on the example description and on a file that is
# none, and export, import and explain with --kernel, and report, and help --man (the man page).
# Usage: valgrind_cli.sh PMTUNE SOURCE_DIR
set -u
pmtune=$1
src=$2
dir=$(mktemp -d /tmp/pmtune-valgrind-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0

# step WANT ARGS...: runs pmtune ARGS under valgrind; WANT is the status the command must end
# with ("1gpu": 1 where there is no CUDA device, which the command must say, else 0).
step() {
  want=$1
  shift
  start=$(date +%s)
  env -u PMTUNE_DB -u XDG_CACHE_HOME HOME="$dir/home" \
    valgrind --quiet --error-exitcode=99 --leak-check=full \
    --log-file="$dir/vg.log" "$pmtune" "$@" >"$dir/out" 2>"$dir/err"
  rc=$?
  took=$(($(date +%s) - start))
  if [ "$want" = 1gpu ]; then
    if grep -q "no CUDA device" "$dir/err"; then want=1; else want=0; fi
  fi
  if [ $rc -eq 99 ] || [ -s "$dir/vg.log" ]; then
    echo "FAIL pmtune $*: valgrind found errors:"
    cat "$dir/vg.log"
    failed=1
  elif [ $rc -ne "$want" ]; then
    echo "FAIL pmtune $*: status $rc, not $want:"
    cat "$dir/err"
    failed=1
  else
    echo "ok   pmtune $* (status $rc, ${took} s)"
  fi
}

db=$dir/fab.db
sha=$("$pmtune" compile --op matadd --arch sm_90 --config seed | awk '$1 == "sha256" {print $2}')
[ -n "$sha" ] || { echo "FAIL: no template hash from pmtune compile"; exit 1; }
gpu=GPU-00000000-0000-0000-0000-000000000000
at=2026-11-23T00:00:00.000Z
m() { # a measurement of matadd 4096x4096: is_seed config median_ms
  printf '{"gpu":"%s","op":"matadd","dtype":"f32","rows":4096,"cols":4096,"n":null,"radius":null,"variant":"order=row","template_sha256":"%s","params":%s,"is_seed":%s,"config":"%s","status":"ok","median_ms":%s,"min_ms":%s,"max_ms":%s,"samples":20,"gbps":%s,"verified":true,"max_error":0,"measured_at":"%s"}' \
    "$gpu" "$sha" "$1" "$2" "$3" "$4" "$4" "$4" "$5" "$at"
}
{
  printf '{"format":"pmtune-export","version":1,"pmtune_version":"0.1.0","exported_at":"%s",\n' "$at"
  printf '"gpus":[{"uuid":"%s","name":"Fake H100","cc_major":9,"cc_minor":0,"arch":"sm_90","sm_count":132,"mem_bytes":85899345920,"driver_version":12040,"runtime_version":12080}],\n' "$gpu"
  printf '"measurements":[%s,\n%s]}\n' \
    "$(m '{"bx":32,"by":32,"vec":1,"ept":1,"grid":0,"map":0,"align":0}' true 'bx=32 by=32 vec=1 ept=1 grid=0 map=0 align=0' 2.0 500)" \
    "$(m '{"bx":64,"by":4,"vec":4,"ept":1,"grid":0,"map":0,"align":0}' false 'bx=64 by=4 vec=4 ept=1 grid=0 map=0 align=0' 1.0 1000)"
} >"$dir/doc.json"

begin=$(date +%s)
step 0 space --op filter --size 1024x1024 --radius 2
step 0 compile --op add --arch sm_90 --config seed -o "$dir/add.cubin"
step 0 db init --db "$db"
step 0 import "$dir/doc.json" --db "$db"
step 0 db check --db "$db"
step 0 show --db "$db"
step 0 export "$dir/out.json" --all --db "$db"
step 0 import "$dir/out.json" --db "$db"
step 1gpu explain --op matadd --size 4000x4000 --db "$db"
step 2 space --op matadd --radius 2
step 1 import "$dir" --db "$db"
step 0 space --kernel "$src/examples/kernels/matadd.json" --size 4097x3001
step 1 space --kernel "$dir/doc.json"
step 0 export "$dir/k.json" --kernel "$src/examples/kernels/matadd.json" --db "$db"
step 0 import "$dir/k.json" --kernel "$src/examples/kernels/matadd.json" --db "$db"
step 1 import "$dir" --kernel "$src/examples/kernels/matadd.json" --db "$db"
step 1gpu explain --kernel "$src/examples/kernels/matadd.json" --size 100x100 --db "$db"
step 0 report --svg "$dir/r.svg" --db "$db"
step 0 help --man
echo "valgrind_cli: $(($(date +%s) - begin)) s"
exit $failed
