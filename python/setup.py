"""setup.py: pip's build of the package (`pip install ./python`): the project's CMake builds
libpmtune and the extension and stages the package (python/CMakeLists.txt); this copies what it
staged, the library and the shipped results into the wheel, so a fresh virtual environment needs
nothing else. PMTUNE_SOURCE_DIR names the repository where python/ was copied out of it;
CMAKE_ARGS adds to CMake's configuration (e.g. -DCUDAToolkit_ROOT=...)."""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("PMTUNE_SOURCE_DIR") or os.path.dirname(HERE)


class BinaryDistribution(Distribution):
    """A wheel for this platform: it holds _ext and libpmtune."""

    def has_ext_modules(self):
        return True


class BuildWithCMake(build_py):
    """build_py, then the library, the extension and the results, built by CMake."""

    def run(self):
        super().run()
        if not os.path.exists(os.path.join(SOURCE, "CMakeLists.txt")):
            raise RuntimeError("pmtune's Python package is built from its repository (%s has no "
                               "CMakeLists.txt): run `pip install ./python` there, or set "
                               "PMTUNE_SOURCE_DIR to the repository" % SOURCE)
        build = os.path.abspath(os.path.join(self.get_finalized_command("build").build_temp,
                                             "cmake"))
        configure = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DBUILD_TESTING=OFF", "-DPython3_EXECUTABLE=" + sys.executable]
        subprocess.check_call(configure + shlex.split(os.environ.get("CMAKE_ARGS", "")))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "--build", build, "--target", "pmtune_python", "-j", jobs])
        staged = os.path.join(build, "python", "pmtune")
        dest = os.path.join(self.build_lib, "pmtune")
        for f in glob.glob(os.path.join(staged, "_ext*.so")):
            shutil.copy(f, dest)
        os.makedirs(os.path.join(dest, "lib"), exist_ok=True)
        for f in glob.glob(os.path.join(staged, "lib", "libpmtune.so.*")):
            shutil.copy(f, os.path.join(dest, "lib"))  # the file the link names
        results = os.path.join(dest, "share", "pmtune", "results")  # beside lib/, as installed
        shutil.rmtree(results, ignore_errors=True)
        shutil.copytree(os.path.join(build, "share", "pmtune", "results"), results)


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithCMake})
