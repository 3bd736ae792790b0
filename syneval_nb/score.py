"""Moved to :mod:`syneval_nb.app.score`. This name forwards there (the same module object) until the restructuring's
last step, so old imports and monkeypatches keep working."""
import sys

from syneval_nb.app import score as _module

sys.modules[__name__] = _module
