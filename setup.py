"""Build of the optional compiled speed-ups (``syneval_nb/_speedups.pyx``); everything else is in pyproject.toml.

The extension is optional: without Cython it is not attempted, and a failed compilation (no C compiler, no Python
headers) only prints a warning; the package then runs its pure-Python code, which gives the same numbers, more
slowly (``syneval_nb._accel.STATUS`` says which runs). ``SYNEVAL_NB_PURE_PYTHON=1`` at install time skips the build.
"""
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns instead of failing (``Extension(optional=True)`` is not honoured by editable
    installs)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure falls back to pure Python
            self._warn(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._warn(exc)

    @staticmethod
    def _warn(exc: Exception) -> None:
        print(f"setup.py: WARNING: the optional compiled speed-ups were not built ({exc}); syneval_nb runs pure "
              "Python (same numbers, slower). Install a C compiler (Debian/Ubuntu: build-essential) and re-run "
              "`bash setup.sh` to build them.", file=sys.stderr)


ext_modules = []
if os.environ.get("SYNEVAL_NB_PURE_PYTHON", "").strip().lower() not in ("1", "true", "yes"):
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("setup.py: Cython not found; syneval_nb runs pure Python (same numbers, slower)", file=sys.stderr)
    else:
        ext_modules = cythonize(
            [Extension("syneval_nb._speedups", ["syneval_nb/_speedups.pyx"], extra_compile_args=["-O2"])],
            language_level=3, quiet=True)

setup(ext_modules=ext_modules, cmdclass={"build_ext": OptionalBuildExt})
