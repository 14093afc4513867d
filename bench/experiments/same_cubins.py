#!/usr/bin/env python3
# same_cubins.py: checks that two pmtune builds compile the templates to the same cubins, for a change to the templates' text that must not change their code; needs NVRTC, no GPU.
"""Usage: same_cubins.py OLD_PMTUNE NEW_PMTUNE [--arch sm_90] [--per-op 400] [--jobs 2] [--seed 1]

Each group is an op, a type and, for the filter, a radius and a border (what `pmtune compile`
compiles apart; matadd's order is an argument of the kernel, not a define). For each group the
valid points (`pmtune space --list --nondeterministic` of NEW) are cut to one a distinct kernel
(the host axes, such as align, dropped), and a sample of them compiled with both builds
(`pmtune compile -o`): the seed and others drawn at random with --seed, --per-op kernels an op
in all, split evenly over its groups (all of a group that has fewer). The cubins are compared
byte for byte. Prints each group's count, each op's template hash in both builds and how many
values of each define its sample took; exits 1 where a cubin differs or a compile fails.
"""
import argparse
import concurrent.futures
import hashlib
import math
import os
import random
import re
import subprocess
import sys
import tempfile

OPS = ["matadd", "reduce", "filter", "add"]
TYPES = ["f32", "f16", "bf16", "f64"]
FILTER_GROUPS = [["--radius", str(r), "--border", b] for r in (1, 2, 3) for b in ("clamp", "zero")]


def space(pmtune, op, extra):
    """The define axes (name -> (define, how many values)) and the distinct kernels of op's valid
    points, as configuration texts, the seed first."""
    out = subprocess.run([pmtune, "space", "--op", op, "--nondeterministic", "--list"] + extra,
                         check=True, capture_output=True, text=True).stdout
    axes, host, seed, points = {}, set(), None, []
    for line in out.splitlines():
        m = re.match(r"^  ([a-z_0-9]+)\s+(\(host\)|[A-Z_0-9]+)\s", line)
        if m and m.group(1) != "axis":
            if m.group(2) == "(host)":
                host.add(m.group(1))
            else:
                axes[m.group(1)] = (m.group(2), len(line[20:52].split()))  # "  %-8s %-8s %-32s"
        elif line.startswith("  seed: "):
            seed = line[len("  seed: "):]
        elif re.match(r"^  ([a-z_0-9]+=-?\d+ ?)+$", line):
            points.append(line.strip())
    kernels, seen = [], set()
    for p in [seed] + points:
        key = tuple(kv for kv in p.split() if kv.split("=")[0] not in host)
        if key not in seen:
            seen.add(key)
            kernels.append(p)
    return axes, kernels


def compile_one(pmtune, op, extra, config, arch, path):
    """The template's hash and the cubin's bytes, or (None, NVRTC's words)."""
    r = subprocess.run([pmtune, "compile", "--op", op, "--config", config, "--arch", arch,
                        "-o", path] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip().splitlines()[0]
    sha = re.search(r"sha256\s+([0-9a-f]{64})", r.stdout).group(1)
    with open(path, "rb") as f:
        return sha, f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--per-op", type=int, default=400)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for op in OPS:
            groups = [[t] + g for t in TYPES for g in (FILTER_GROUPS if op == "filter" else [[]])]
            per = math.ceil(a.per_op / len(groups))
            hashes, taken, total = set(), {}, 0
            for g in groups:
                extra = ["--dtype"] + g
                axes, kernels = space(a.new, op, extra)
                pick = kernels if len(kernels) <= per else kernels[:1] + sorted(
                    rng.sample(kernels[1:], per - 1), key=kernels.index)
                def job(i):
                    cfg = pick[i]
                    o = compile_one(a.old, op, extra, cfg, a.arch, os.path.join(tmp, f"{i}.old"))
                    n = compile_one(a.new, op, extra, cfg, a.arch, os.path.join(tmp, f"{i}.new"))
                    return cfg, o, n
                same = 0
                with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                    for cfg, (osha, obin), (nsha, nbin) in ex.map(job, range(len(pick))):
                        if osha is None or nsha is None:
                            print(f"  {op} {' '.join(g)} {cfg}: failed: {obin if osha is None else nbin}")
                            bad += 1
                            continue
                        hashes.add((osha, nsha))
                        if obin == nbin:
                            same += 1
                        else:
                            bad += 1
                            print(f"  {op} {' '.join(g)} {cfg}: cubins differ "
                                  f"({len(obin)} and {len(nbin)} bytes; sha256 "
                                  f"{hashlib.sha256(obin).hexdigest()[:12]} and "
                                  f"{hashlib.sha256(nbin).hexdigest()[:12]})")
                        for kv in cfg.split():
                            k, v = kv.split("=")
                            if k in axes:
                                taken.setdefault(axes[k], set()).add(v)
                total += len(pick)
                print(f"{op:6} {' '.join(g):24} {same:4} of {len(pick):4} kernels the same "
                      f"({len(kernels)} distinct)", flush=True)
            for osha, nsha in sorted(hashes):
                print(f"{op:6} template {osha} -> {nsha}")
            print(f"{op:6} {total} kernels; values taken: " +
                  ", ".join(f"{d} {len(v)}/{n}" for (d, n), v in taken.items()), flush=True)
    print("all the same" if bad == 0 else f"{bad} kernels differ or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
