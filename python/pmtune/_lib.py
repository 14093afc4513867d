"""_lib.py: finding libpmtune.so (the package's own copy first) and opening it in the extension."""
import ctypes.util
import os
import subprocess
import sys

# The soname's major version: the ABI this package was written against (docs/install.md).
ABI_MAJOR = 0


class LibraryNotFound(OSError):
    """libpmtune.so is neither where PMTUNE_LIBRARY says nor where an install puts it."""


def _candidates():
    """Where libpmtune.so may be, most explicit first."""
    env = os.environ.get("PMTUNE_LIBRARY")
    if env:  # the caller said where: nothing else is tried
        yield env
        return
    # the copy pip bundled (and the build tree's staged package, build/python/pmtune)
    yield os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib",
                       "libpmtune.so.%d" % ABI_MAJOR)
    yield "libpmtune.so.%d" % ABI_MAJOR  # the loader's own search: ld.so.cache, LD_LIBRARY_PATH
    try:  # `cmake --install` puts pmtune.pc beside the library: its libdir
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "pmtune"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "libpmtune.so.%d" % ABI_MAJOR)
    except (OSError, subprocess.SubprocessError):
        pass
    for prefix in (sys.prefix, "/usr/local", "/usr"):  # a prefix pip and cmake share, the usual
        for lib in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
            yield os.path.join(prefix, lib, "libpmtune.so.%d" % ABI_MAJOR)
    found = ctypes.util.find_library("pmtune")
    if found:
        yield found


def load():
    """Opens the library in the extension; its path. LibraryNotFound says where it looked."""
    from . import _ext
    tried = []
    for path in _candidates():
        try:
            _ext.load(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        return path
    raise LibraryNotFound("libpmtune.so not found; set PMTUNE_LIBRARY to its path, or install it "
                          "with `pip install ./python` or `cmake --install`. Tried: "
                          + "; ".join(tried))
