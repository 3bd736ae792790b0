"""Moved to :mod:`syneval_nb.app.cli`. This name forwards there (the same module object) until the restructuring's
last step, so old imports and monkeypatches keep working."""
import sys

from syneval_nb.app import cli as _module

if __name__ == "__main__":  # python -m syneval_nb.cli
    sys.exit(_module.main())
sys.modules[__name__] = _module
