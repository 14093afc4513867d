#!/usr/bin/env python3
# rekey.py: re-keys the shipped results to the templates of another build, for a change to the templates that changes no cubin (bench/experiments/same_cubins.py shows it).
"""Usage: results/rekey.py OLD_PMTUNE NEW_PMTUNE FILE...

A measurement is served only for the template it was made with, named by its SHA-256
("template_sha256"). Where a change to the templates changed their text but not their code,
this writes each op's hash in NEW_PMTUNE in place of its hash in OLD_PMTUNE (as `pmtune compile
--op OP` prints them) in each pmtune export document, and nothing else: every other byte of the
document stays. A .gz document is inflated and compressed again with `gzip -9 -n`. Refuses a
document holding a measurement of another template than OLD's.
"""
import json
import re
import subprocess
import sys

import exportdoc

OPS = ["matadd", "reduce", "filter", "add"]


def template_hash(pmtune, op):
    out = subprocess.run([pmtune, "compile", "--op", op, "--arch", "sm_90"], check=True,
                         capture_output=True, text=True).stdout
    return re.search(r"sha256\s+([0-9a-f]{64})", out).group(1)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    to = {}
    for op in OPS:
        a, b = template_hash(old, op), template_hash(new, op)
        print(f"{op:6} {a} -> {b}")
        to[a] = (op, b)
    for path in files:
        text, _ = exportdoc.read(path)
        counts = {}
        for m in json.loads(text)["measurements"]:
            op, sha = m["op"], m["template_sha256"]
            if to.get(sha, (None,))[0] != op:
                sys.exit(f"{path}: a {op} measurement of template {sha}, not the old build's")
            counts[sha] = counts.get(sha, 0) + 1
        for sha, n in counts.items():
            key = f'"template_sha256":"{sha}"'
            if text.count(key) != n:
                sys.exit(f"{path}: {n} measurements of {sha}, {text.count(key)} times '{key}'")
            text = text.replace(key, f'"template_sha256":"{to[sha][1]}"')
            print(f"{path}: {n} {to[sha][0]} measurements re-keyed")
        exportdoc.write(path, text)


if __name__ == "__main__":
    main()
