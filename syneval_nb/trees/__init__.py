"""Trees: the PTB reader and :class:`FlatTree` (:mod:`.ptb`), Collins heads and dependency trees (:mod:`.heads`),
the integer encoding of trees (:mod:`.encoding`), the all-subtree kernel (:mod:`.kernels`), the RST tree format
(:mod:`.rst`) and syntactic hybridization of references (:mod:`.hybrid`).

``syneval_nb.trees.X`` is the PTB module's ``X`` (the names of the former ``syneval_nb.trees`` module).
"""
from .ptb import *  # noqa: F401,F403
from syneval_nb.trees import ptb as _ptb
from syneval_nb.trees.ptb import __all__  # noqa: F401


def __getattr__(name: str):
    return getattr(_ptb, name)
