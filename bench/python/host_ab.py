#!/usr/bin/env python3
"""host_ab.py: builds of the extension against each other and torch, in one process: each
_ext.abi3.so given (a build of python/pmtune/_ext*.c, e.g. with a change to try) is loaded as a
module of its own beside the package's, set up as the package sets up its own, and each call of
host_cost.py's calls() is timed through every build and through torch alternately (its per_call_us:
2,000 calls a round, 21 rounds in alternating order, the median round's us a call). One JSON line a
call: us a call for each build (by its label) and torch.

Usage: python3 bench/python/host_ab.py LABEL=PATH/_ext.abi3.so...   (BUILD: the build folder
whose staged package is imported, build; the package's own extension is timed as "package")"""
import importlib.machinery
import importlib.util
import json
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, os.environ.get("BUILD", "build"), "python"))
import pmtune  # noqa: E402
from host_cost import calls, per_call_us  # noqa: E402  (its calls; its loop: ROUNDS rounds of CALLS calls)


def load(label, path):
    name = "pmtune_ab_%s._ext" % label  # the init function is PyInit__ext, as the package's
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    mod.setup(pmtune.Error, pmtune._device_handle, pmtune._load, pmtune._arrays.empty_like)
    pmtune._load()
    mod.load(pmtune.library_path)  # its own table of the library's functions
    return mod


def main():
    builds = [("package", pmtune._ext)]
    for arg in sys.argv[1:]:
        label, path = arg.split("=", 1)
        builds.append((label, load(label, path)))
    print(json.dumps({"kind": "run", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "python": sys.version.split()[0], "commit": os.environ.get("PM_COMMIT"),
                      "builds": [l for l, _ in builds]}), flush=True)
    for name, pm, th in calls():
        us = per_call_us([pm(m) for _, m in builds] + [th])
        line = {"call": name}
        line.update({label: round(u, 2) for (label, _), u in zip(builds, us)})
        line["torch"] = round(us[-1], 2)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
