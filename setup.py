"""Build of the optional compiled speed-ups (``syneval_nb/_speedups.pyx``); everything else is in pyproject.toml.

The extension is optional twice over: without Cython it is not attempted, and a compiler error only warns
(``optional=True``); the package then runs its pure-Python code, which gives the same numbers, more slowly.
``SYNEVAL_NB_PURE_PYTHON=1`` at install time skips the build.
"""
import os

from setuptools import Extension, setup

ext_modules = []
if os.environ.get("SYNEVAL_NB_PURE_PYTHON", "") not in ("1", "true", "yes"):
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("setup.py: Cython not found; syneval_nb runs pure Python (same numbers, slower)")
    else:
        ext_modules = cythonize(
            [Extension("syneval_nb._speedups", ["syneval_nb/_speedups.pyx"], optional=True,
                       extra_compile_args=["-O2"])],
            language_level=3, quiet=True)

setup(ext_modules=ext_modules)
