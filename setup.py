"""Build of the optional compiled speed-ups (``syneval_nb/_speedups.pyx``) and of the package data; everything else
is in pyproject.toml.

Package data: a wheel carries the report notebook and the kit's examples as ``syneval_nb/resources/`` (found with
:mod:`importlib.resources` by :mod:`syneval_nb.paths`). Their one source stays in the checkout
(``notebooks/09_evaluate_your_system.ipynb``, ``data/examples/``); :class:`BuildPyWithResources` copies them into the
build at build time (``MANIFEST.in`` puts them into the sdist, from which ``python -m build`` makes the wheel).

The extension is optional: without Cython it is not attempted, and a failed compilation (no C compiler, no Python
headers) only prints a warning; the package then runs its pure-Python code, which gives the same numbers, more
slowly (``syneval_nb._accel.STATUS`` says which runs). ``SYNEVAL_NB_PURE_PYTHON=1`` at install time skips the build.
"""
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# package data copied at build time: (source in the checkout, destination inside syneval_nb/resources)
RESOURCES = [("notebooks/09_evaluate_your_system.ipynb", "notebooks/09_evaluate_your_system.ipynb"),
             ("data/examples", "examples")]


class BuildPyWithResources(build_py):
    """``build_py`` that also copies the report notebook and ``data/examples/`` into ``syneval_nb/resources/`` of
    the build (not in editable mode: there the package reads them from the checkout)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest_root = Path(self.build_lib) / "syneval_nb" / "resources"
        for src, dest in RESOURCES:
            source, target = HERE / src, dest_root / dest
            if not source.exists():
                raise FileNotFoundError(f"setup.py: {src} is missing: the wheel would lack its package data")
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
            else:
                shutil.copyfile(source, target)


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

setup(ext_modules=ext_modules, cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithResources})
