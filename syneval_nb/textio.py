"""Reading the kit's line-aligned text files: one segment, sentence or parse per line.

Every file reader of the kit (data loaders, ``syneval-nb parse``, the PTB file readers) goes through
:func:`read_lines`, so they agree on what a line is: lines are split on ``\\n``; a ``\\r`` before it is dropped
(Windows line ends); a final newline does not add an empty line; a UTF-8 byte-order mark is ignored; and a file
that is not UTF-8 raises :class:`InputEncodingError` naming the line and byte of the first bad sequence.
Every JSON the kit writes (results files, ``score --format json``) goes through the one converter :func:`to_json`.
"""
from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_lines", "InputEncodingError"]


class InputEncodingError(ValueError):
    """An input file is not UTF-8; the message names the line and byte."""


def read_lines(path: str | os.PathLike) -> list[str]:
    """Lines of a UTF-8 text file without their line ends (see the module docstring)."""
    data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_no = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1)
        raise InputEncodingError(
            f"{path}: not UTF-8: line {line_no}, byte {col + 1} of the line (offset {e.start} in the file) is "
            f"{data[e.start:e.start + 1]!r} ({e.reason}); convert the file, e.g. `iconv -f latin1 -t utf-8`"
        ) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def to_json(obj: Any, *, finite: bool = True) -> Any:
    """``obj`` as plain JSON values, the kit's one converter: mappings become dicts with ``str`` keys; lists,
    tuples, sets and numpy arrays become lists; numpy scalars their Python value; NaN and +-inf become ``None``
    (``finite=False`` keeps them, for values still to be printed before they are written, e.g. verdicts);
    dataclasses dicts of their fields; a pandas ``Series`` the dict of its values, a ``DataFrame`` a list of row
    dicts, ``pd.NA``/``pd.NaT`` ``None``; a ``Path`` (and anything else) its ``str``."""
    if isinstance(obj, Mapping):
        return {str(k): to_json(v, finite=finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_json(v, finite=finite) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_json(v, finite=finite) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if finite and isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_json({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}, finite=finite)
    pd = sys.modules.get("pandas")  # a pandas object exists only once pandas is imported
    if pd is not None:
        if isinstance(obj, pd.Series):
            return to_json(obj.to_dict(), finite=finite)
        if isinstance(obj, pd.DataFrame):
            return to_json(obj.to_dict("records"), finite=finite)
        if obj is pd.NA or obj is pd.NaT:
            return None
    return str(obj)
