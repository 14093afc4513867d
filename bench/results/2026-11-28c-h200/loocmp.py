#!/usr/bin/env python3
# loocmp.py OLD NEW...: pmtune_loo --list outputs of two documents compared at the sizes in both, each
# decision judged against the fastest measured in the NEW document (the old one's bar is lower where the
# new one measured something faster)
import re, sys, collections
pat = re.compile(r"^(\w+) (.*?): (\w+)(?: \(default\))? ([\d.]+) (.*?) \| .*measured ([\d.e-]+) \(fastest ([\d.e-]+)\)")
def read(paths):
    d = {}
    for p in paths:
        for l in open(p):
            m = pat.match(l)
            if m: d[(m[1], m[2])] = (m[5], float(m[6]), float(m[7]))
    return d
old, new = read([sys.argv[1]]), read(sys.argv[2:])
t = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0, 1, 1])
worse = []
for k in old.keys() & new.keys():
    oc, om, of = old[k]; nc, nm, nf = new[k]
    key = (k[0], k[1].split()[-1] if k[1].split()[-1] in ("f16", "bf16", "f64") else "f32")
    ro, rn = nf / om, nf / nm
    x = t[key]; x[0] += 1; x[1] += ro >= 0.95; x[2] += rn >= 0.95; x[3] += ro >= 0.90; x[4] += rn >= 0.90
    x[5] += oc != nc; x[6] = min(x[6], ro); x[7] = min(x[7], rn)
    if oc != nc and rn < ro - 0.02: worse.append((rn - ro, k, round(ro, 3), round(rn, 3)))
for key in sorted(t):
    n, o95, n95, o90, n90, diff, wo, wn = t[key]
    print(f"{key[0]} {key[1]:5s} {n:4d} sizes: within 95% {o95} -> {n95}, within 90% {o90} -> {n90}, worst {wo:.3f} -> {wn:.3f}; {diff} decided otherwise")
print("decided otherwise and worse by over 0.02:", len(worse))
for w in sorted(worse)[:10]: print("  ", w[1], w[2], "->", w[3])
