"""Metrics: one face for every family and the registry (:mod:`.registry`).

``syneval_nb.metrics.get("STM-4")``, ``names()``, ``register(...)``, ``Corpus``, ``Score``, ``Metric`` are the
registry's (the names of the former ``syneval_nb.metrics`` module). The families: :mod:`.lexical`,
:mod:`.syntactic`, :mod:`.discourse`, :mod:`.learned`; the combinations of chapter 07: :mod:`.combine`.
"""
from .registry import *  # noqa: F401,F403
from syneval_nb.metrics import registry as _registry
from syneval_nb.metrics.registry import __all__  # noqa: F401


def __getattr__(name: str):
    return getattr(_registry, name)
