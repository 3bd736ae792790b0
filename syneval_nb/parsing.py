"""Moved: the parse front end to :mod:`syneval_nb.parsers.frontend`, the backends to :mod:`syneval_nb.parsers.stanford`
and :mod:`syneval_nb.parsers.spacy`, the file helpers to :mod:`syneval_nb.app.files`, the command to
:mod:`syneval_nb.app.parse`. This name forwards every former name until the restructuring's last step."""
from syneval_nb.app import files as _files
from syneval_nb.app import parse as _parse_cli
from syneval_nb.parsers import frontend as _frontend
from syneval_nb.parsers import spacy as _spacy
from syneval_nb.parsers import stanford as _stanford
from syneval_nb.textio import InputEncodingError  # noqa: F401
from syneval_nb.textio import read_lines as read_sentences  # noqa: F401

_HOMES = (_frontend, _stanford, _spacy, _files, _parse_cli)


def __getattr__(name: str):
    for m in _HOMES:
        if name in vars(m):
            return vars(m)[name]
    raise AttributeError(f"module 'syneval_nb.parsing' has no attribute {name!r}")
