"""Moved to :mod:`syneval_nb.app.runner`. This name forwards there (the same module object) until the restructuring's
last step, so old imports and monkeypatches keep working."""
import sys

from syneval_nb.app import runner as _module

if __name__ == "__main__":  # python -m syneval_nb.runner strip notebooks/*.ipynb
    if len(sys.argv) > 1 and sys.argv[1] == "strip":
        _module.strip_outputs(sys.argv[2:])
    else:
        sys.exit(_module.cli(sys.argv[1:]))
sys.modules[__name__] = _module
