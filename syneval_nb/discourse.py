"""Moved: the RST tree format and the DR / DR-lex trees to :mod:`syneval_nb.trees.rst`, the DR and DR-lex metrics
to :mod:`syneval_nb.metrics.discourse`, the Feng-Hirst parser to :mod:`syneval_nb.parsers.feng_hirst`, ``parse_rst``
to :mod:`syneval_nb.parsers.frontend`, the shipped trees' loaders to :mod:`syneval_nb.data`, the command to
:mod:`syneval_nb.app.rst`. This name forwards every former name until the restructuring's last step."""
from syneval_nb import data as _data
from syneval_nb.app import rst as _rst_cli
from syneval_nb.metrics import discourse as _metric
from syneval_nb.parsers import feng_hirst as _parser
from syneval_nb.parsers import frontend as _frontend
from syneval_nb.trees import rst as _rst

_HOMES = (_rst, _metric, _parser, _frontend, _data, _rst_cli)


def __getattr__(name: str):
    for m in _HOMES:
        if name in vars(m):
            return vars(m)[name]
    raise AttributeError(f"module 'syneval_nb.discourse' has no attribute {name!r}")
