"""_lib.py: finding libpmtune.so and declaring the C functions pmtune.h exports, for ctypes."""
import ctypes
import ctypes.util
import os
import subprocess
import sys

# The soname's major version: the ABI this package was written against (README, "Installing").
ABI_MAJOR = 0


class LibraryNotFound(OSError):
    """libpmtune.so is neither where PMTUNE_LIBRARY says nor where an install puts it."""


def _candidates():
    """Where libpmtune.so may be, most explicit first."""
    env = os.environ.get("PMTUNE_LIBRARY")
    if env:  # the caller said where: nothing else is tried
        yield env
        return
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
    """The loaded library with its functions declared; LibraryNotFound says where it looked."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        return lib, path
    raise LibraryNotFound("libpmtune.so not found; set PMTUNE_LIBRARY to its path, or install it "
                          "with `cmake --install`. Tried: " + "; ".join(tried))


class Options(ctypes.Structure):
    """pm_options, field for field."""
    _fields_ = [("device", ctypes.c_int), ("db_path", ctypes.c_char_p),
                ("autotune", ctypes.c_int), ("autotune_budget", ctypes.c_int),
                ("record", ctypes.c_int)]


def _declare(lib):
    c_size, vp, i = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int
    sigs = {
        "pm_version": (ctypes.c_char_p, []),
        "pm_strerror": (ctypes.c_char_p, [i]),
        "pm_errname": (ctypes.c_char_p, [i]),
        "pm_open": (i, [ctypes.POINTER(vp), ctypes.POINTER(Options)]),
        "pm_close": (None, [vp]),
        "pm_reload": (i, [vp]),
        "pm_errmsg": (ctypes.c_char_p, [vp]),
        "pm_notice": (ctypes.c_char_p, [vp]),
        "pm_matadd": (i, [vp, c_size, c_size, i, vp, c_size, vp, c_size, vp, c_size, vp]),
        "pm_add": (i, [vp, c_size, vp, vp, vp, vp]),
        "pm_matadd_t": (i, [vp, i, c_size, c_size, i, vp, c_size, vp, c_size, vp, c_size, vp]),
        "pm_add_t": (i, [vp, i, c_size, vp, vp, vp, vp]),
        "pm_reduce_sum": (i, [vp, c_size, vp, vp, vp]),
        "pm_reduce_sum_t": (i, [vp, i, c_size, vp, i, vp, vp]),
        "pm_filter": (i, [vp, c_size, c_size, vp, c_size, vp, c_size,
                          ctypes.POINTER(ctypes.c_float), i, i, vp]),
        "pm_filter_t": (i, [vp, i, c_size, c_size, vp, c_size, vp, c_size, vp, i, i, vp]),
        "pm_kernel_open": (i, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
        "pm_kernel_launch_with": (i, [vp, ctypes.POINTER(c_size), ctypes.POINTER(vp),
                                      ctypes.POINTER(vp), c_size, vp]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
