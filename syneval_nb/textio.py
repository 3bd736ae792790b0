"""Reading the kit's line-aligned text files: one segment, sentence or parse per line.

Every file reader of the kit (data loaders, ``syneval-nb parse``, the PTB file readers) goes through
:func:`read_lines`, so they agree on what a line is: lines are split on ``\\n``; a ``\\r`` before it is dropped
(Windows line ends); a final newline does not add an empty line; a UTF-8 byte-order mark is ignored; and a file
that is not UTF-8 raises :class:`InputEncodingError` naming the line and byte of the first bad sequence.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["InputEncodingError", "read_lines"]


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
