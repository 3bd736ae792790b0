"""File helpers of the commands: input lines with one-line errors, output paths checked before any work."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.textio import read_lines as read_sentences


# ------------------------------------------------------------------------------------------------- files / CLI


__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face


class OutputPathError(ValueError):
    """An output path that cannot be written, or that would replace the input (checked before any work)."""


def read_input_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a command's input file (:func:`syneval_nb.textio.read_lines`), with one-line errors:
    :class:`InputEncodingError` for a file that is not UTF-8, ``OSError`` naming the file otherwise (missing, a
    folder, unreadable)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"the input {p} is a folder, not a text file")
    try:
        return read_sentences(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"the input file {p} does not exist") from None
    except OSError as e:
        raise OSError(f"cannot read the input file {p}: {e.strerror or e}") from None


def check_output_path(output: str | os.PathLike, input_path: str | os.PathLike) -> Path:
    """Refuse, before any work, an output path that would replace the input or cannot be written.

    Raises :class:`OutputPathError` when ``output`` is the input file itself (the same path, a symbolic link to it,
    a hard link of it, or the same file reached through a linked folder), an existing folder, a read-only file, or
    lies below a path that is a file or a folder where files cannot be created. Missing folders are allowed (they are
    created when the output is written, see :func:`write_output`). Returns ``Path(output)``.
    """
    out = Path(output)
    src = Path(input_path)
    if str(output) in ("", "-") or out.name in ("", ".", ".."):
        raise OutputPathError(f"the output {str(output)!r} is not a file name")
    if out.exists():
        if out.is_dir():
            raise OutputPathError(f"the output {out} is an existing folder; give a file name, e.g. "
                                  f"{out / (src.name + '.out')}")
        if src.exists() and os.path.samefile(out, src):
            raise OutputPathError(f"the output {out} is the input file {src} (the same file, or a link to it); "
                                  "the input is never overwritten: choose another output path")
        if not os.access(out, os.W_OK):
            raise OutputPathError(f"the output {out} exists and is read-only")
    elif os.path.realpath(out) == os.path.realpath(src):  # a dangling link chain that would end at the input
        raise OutputPathError(f"the output {out} leads to the input file {src}; choose another output path")
    # the nearest existing folder above the output must be a folder in which files can be created
    parent = Path(os.path.abspath(out)).parent
    while not parent.exists() and parent != parent.parent:
        if parent.is_symlink():
            raise OutputPathError(f"cannot create the folder of the output {out}: {parent} is a broken link")
        parent = parent.parent
    if not parent.is_dir():
        raise OutputPathError(f"cannot write the output {out}: {parent} is a file, not a folder")
    try:  # a real probe: os.access ignores read-only mounts and says yes to root
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".syneval-nb-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputPathError(f"cannot write the output {out}: the folder {parent} does not accept new files "
                              f"({e.strerror or e})") from None
    return out


def write_output(path: str | os.PathLike, write: Callable[[Path], Any]) -> Path:
    """Write an output file whole or not at all: ``write(tmp)`` fills a temporary file beside ``path`` (missing
    folders are created), which then replaces ``path``; on any error or interruption the temporary file is removed
    and ``path`` is left as it was."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # the permissions a plain open() would give (mkstemp makes 0600)
        write(tmp)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out


def interrupted_message(cache_path: str | os.PathLike | None, key: str, texts: Sequence[str]) -> str:
    """The one line printed when a command is interrupted: how many of ``texts`` now have a result in the cache
    (what a second run will not compute again)."""
    texts = [t for t in texts if t.strip()]
    if cache_path is None:
        return "interrupted: --no-cache, so no result was kept"
    try:
        with ParseCache(cache_path) as c:
            got = c.get_many(key, texts)
    except Exception as e:  # noqa: BLE001 - the message must not become a traceback
        return f"interrupted: the cache could not be read ({e}); run the same command again to resume"
    n = sum(1 for t in texts if t in got)
    return f"interrupted: {n} results cached; run the same command again to resume"


