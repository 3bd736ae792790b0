"""Moved to :mod:`syneval_nb.stats.meta`. This name forwards there (the same module object) until the restructuring's
last step, so old imports and monkeypatches keep working."""
import sys

from syneval_nb.stats import meta as _module

sys.modules[__name__] = _module
