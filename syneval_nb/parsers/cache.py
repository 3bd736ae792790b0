"""A persistent, process-safe cache of parser outputs (SQLite).

One table maps ``(backend_key, text) -> result``. ``backend_key`` is chosen by the caller and must encode everything
that can change the result: backend name, backend version and options (see
:func:`syneval_nb.parsers.stanford.StanfordParser.backend_key`). ``text`` is the exact input string (no normalisation), and
``result`` is any string (a one-line PTB tree, the JSON of an RST tree...) or ``None`` for an input the backend
failed on *deterministically* (for example a sentence longer than the parser's length limit). A stored ``None`` is
a real cache entry; callers decide whether to retry it.

Durability and concurrency:

- every :meth:`ParseCache.put` / :meth:`ParseCache.put_many` commits at once, so a run that is killed loses at most
  the result that was being written;
- the database runs in WAL mode with a busy timeout, so several processes (and threads of one process, through an
  internal lock) can read and write the same file at the same time;
- opening a file that is not a syneval-nb cache (not SQLite, another program's database, a damaged file) raises
  :class:`CacheError` naming the file and the remedy, before any work starts; so does a path that is a folder, or a
  new file in a read-only folder;
- a healthy cache that cannot be written (a read-only file, or a file in a read-only folder) is opened read-only:
  its parses are used, new results are not stored (:attr:`ParseCache.read_only` says why,
  :attr:`ParseCache.n_skipped` counts the results left out); the commands print one note about it.

Damaged entries: results of the kit's own backends are checked as they are read (:func:`check_result`: a Stanford
result must read as one bracketed tree with :func:`syneval_nb.trees.read_ptb_flat`, or be the unparsed marker
``(())``; a spaCy result must be the JSON of a :class:`syneval_nb.trees.heads.DependencyTree`; an RST result must be JSON
that :func:`syneval_nb.trees.rst.validate_rst` accepts). An entry that fails is left out of :meth:`ParseCache.get_many`
(a miss: the caller parses the text again and the new result replaces it) and listed in
:attr:`ParseCache.last_rejected`; :attr:`ParseCache.n_rejected` counts them over the cache's life.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from syneval_nb.paths import cache_dir


__all__ = ["ParseCache", "open_cache"]

FORMAT_NAME = "syneval-nb-parse-cache"
SCHEMA_VERSION = "1"
_CHUNK = 500  # texts per SELECT ... IN (...) (SQLite allows 999 host parameters in old builds)


class CacheError(RuntimeError):
    """The cache file cannot be used (not SQLite, foreign schema, damaged, unwritable)."""


CHECKS: dict[str, Callable[[str], None]] = {}
"""Result checks by prefix of the backend key. Each backend registers its own (:func:`register_check`): a check
takes a stored result and the text it was stored for (``None`` when unknown) and raises
``ValueError``/``KeyError``/``TypeError`` when it is not a valid result of that text."""


def register_check(prefix: str, check: Callable[[str, str | None], None]) -> None:
    """Check every result stored under a backend key that starts with ``prefix`` with ``check`` as it is read."""
    CHECKS[prefix] = check


def check_result(backend_key: str, result: str | None, text: str | None = None) -> str | None:
    """Why a stored result of ``backend_key`` (for ``text``, when given) is not a valid result of its backend, or
    ``None`` when it is (or when the backend is not one of the kit's, whose results are opaque strings). A stored
    failure (``None``) is valid."""
    if result is None:
        return None
    for prefix, check in CHECKS.items():
        if backend_key.startswith(prefix):
            try:
                check(result, text)
            except (ValueError, KeyError, TypeError) as e:  # TreeFormatError, JSONDecodeError, RSTFormatError
                what = f"missing field {e}" if isinstance(e, KeyError) else str(e).splitlines()[0]
                return f"{what} (cached {result[:60]!r}{'...' if len(result) > 60 else ''})"
            return None
    return None


def default_cache_path() -> Path:
    """``paths.cache_dir()/parses.sqlite`` (``SYNEVAL_NB_CACHE`` moves the folder)."""
    return cache_dir() / "parses.sqlite"


class ParseCache:
    """SQLite-backed ``(backend_key, text) -> str | None`` store; see the module docstring.

    >>> c = ParseCache(":memory:")
    >>> c.put("demo/1", "A b.", "(ROOT (NP (DT A) (NN b) (. .)))")
    >>> c.get_many("demo/1", ["A b.", "unseen"])
    {'A b.': '(ROOT (NP (DT A) (NN b) (. .)))'}
    """

    def __init__(self, path: str | os.PathLike | None = None, timeout: float = 60.0) -> None:
        self.path = default_cache_path() if path is None else Path(path) if str(path) != ":memory:" else ":memory:"
        self._lock = threading.Lock()
        self.last_rejected: dict[str, str] = {}  # text -> why, for the damaged entries of the last get_many
        self.n_rejected = 0  # damaged entries met since this object was opened
        self.read_only: str | None = None  # why the cache is read-only (writes skipped), or None
        self.n_skipped = 0  # results not stored because the cache is read-only
        if self.path != ":memory:":
            where = Path(self.path)
            if where.is_dir():
                raise CacheError(f"the parse cache {where} is a folder: give the cache file's path "
                                 f"(e.g. {where / 'parses.sqlite'})")
            try:
                where.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise CacheError(f"cannot create the parse cache {where}: its folder cannot be made "
                                 f"({e.strerror or e}); give --cache PATH in a writable place, or --no-cache") from e
            if not where.exists() and not os.access(where.parent, os.W_OK):
                raise CacheError(f"cannot create the parse cache {where}: the folder {where.parent} is read-only; "
                                 f"give --cache PATH in a writable place, or --no-cache")
        try:
            self._con = sqlite3.connect(str(self.path), timeout=timeout, check_same_thread=False,
                                        isolation_level=None)
        except sqlite3.Error as e:
            raise CacheError(f"cannot open the parse cache {self.path}: {e}") from e
        try:
            self._setup()
        except sqlite3.DatabaseError as e:
            self._con.close()
            ro = self._read_only_reason(e)
            if ro is None or not self._open_read_only(timeout):
                raise CacheError(
                    f"{self.path} is not a usable syneval-nb parse cache ({e}). It is damaged or another program's "
                    "file: move it away or delete it (it only holds parses that can be recomputed), or pass another "
                    "path (--cache PATH, ParseCache(path))."
                ) from e
            self.read_only = ro
            return
        if self.path != ":memory:" and not os.access(self.path, os.W_OK):  # SQLite opened it read-only itself
            self.read_only = "the file is read-only"

    def _read_only_reason(self, error: Exception) -> str | None:
        """Why the cache file cannot be written (it or its folder is read-only), when that is what ``error`` of the
        read-write open comes from; ``None`` otherwise (the file is then damaged or foreign)."""
        if self.path == ":memory:" or not isinstance(error, sqlite3.OperationalError):
            return None
        f = Path(self.path)
        if not f.is_file():
            return None
        if not os.access(f.parent, os.W_OK):
            return f"its folder {f.parent} is read-only"
        if not os.access(f, os.W_OK):
            return "the file is read-only"
        return None

    def _open_read_only(self, timeout: float) -> bool:
        """Open the file read-only (``mode=ro``; ``immutable=1`` when WAL cannot set up its shared memory in a
        read-only folder) and check it; ``False`` when it is no syneval-nb cache either."""
        uri = Path(self.path).resolve().as_uri()
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            try:
                self._con = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=timeout, check_same_thread=False,
                                            isolation_level=None)
            except sqlite3.Error:
                continue
            try:
                self._setup(read_only=True)
                return True
            except sqlite3.DatabaseError:
                self._con.close()
        return False

    # -- set-up and checks -----------------------------------------------------------------------------------------
    def _setup(self, read_only: bool = False) -> None:
        con = self._con
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and not read_only:
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                con.execute(
                    "CREATE TABLE IF NOT EXISTS parses (backend TEXT NOT NULL, text TEXT NOT NULL, result TEXT, "
                    "created REAL NOT NULL, PRIMARY KEY (backend, text)) WITHOUT ROWID"
                )
                con.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?), ('schema_version', ?)",
                            (FORMAT_NAME, SCHEMA_VERSION))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            tables = {"meta", "parses"}
        if not {"meta", "parses"} <= tables:
            raise sqlite3.DatabaseError(f"foreign SQLite database (tables: {', '.join(sorted(tables))})")
        meta = dict(con.execute("SELECT key, value FROM meta"))
        if meta.get("format") != FORMAT_NAME:
            raise sqlite3.DatabaseError(f"foreign SQLite database (format={meta.get('format')!r})")
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"cache schema version {meta.get('schema_version')!r}, this syneval-nb reads {SCHEMA_VERSION!r}")
        # only our own file is switched to WAL (a foreign database is rejected above, untouched)
        if not read_only:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
        check = con.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {check}")

    def _run(self, fn):
        """Run ``fn(connection)`` under the lock, turning SQLite errors into :class:`CacheError`."""
        with self._lock:
            try:
                return fn(self._con)
            except sqlite3.DatabaseError as e:
                raise CacheError(f"parse cache {self.path}: {e}") from e

    # -- public API ------------------------------------------------------------------------------------------------
    def get_many(self, backend_key: str, texts: Sequence[str], validate: bool = True) -> dict[str, str | None]:
        """Stored results for those of ``texts`` that are in the cache (absent texts are absent from the dict).

        With ``validate`` (the default) a stored result that is not a valid result of its backend
        (:func:`check_result`) counts as absent and is listed in :attr:`last_rejected` with the reason."""
        uniq = list(dict.fromkeys(texts))

        def q(con: sqlite3.Connection) -> dict[str, str | None]:
            out: dict[str, str | None] = {}
            for i in range(0, len(uniq), _CHUNK):
                chunk = uniq[i:i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                out.update(con.execute(f"SELECT text, result FROM parses WHERE backend=? AND text IN ({marks})",
                                       [backend_key, *chunk]))
            return out

        got = self._run(q)
        rejected: dict[str, str] = {}
        if validate:
            for text, result in got.items():
                why = check_result(backend_key, result, text)
                if why is not None:
                    rejected[text] = why
            for text in rejected:
                del got[text]
        self.last_rejected = rejected
        self.n_rejected += len(rejected)
        return got

    def get(self, backend_key: str, text: str, default: object = KeyError) -> str | None:
        """One stored result; raises ``KeyError`` when absent unless ``default`` is given."""
        got = self.get_many(backend_key, [text])
        if text in got:
            return got[text]
        if default is KeyError:
            raise KeyError(text)
        return default  # type: ignore[return-value]

    def put(self, backend_key: str, text: str, result: str | None) -> None:
        """Store one result and commit immediately (replaces an earlier entry for the same key)."""
        self.put_many(backend_key, [(text, result)])

    def put_many(self, backend_key: str, items: Iterable[tuple[str, str | None]]) -> None:
        """Store several results in one committed transaction."""
        rows = [(backend_key, t, r, time.time()) for t, r in items]
        for _, t, r, _ in rows:
            if not isinstance(t, str) or not (r is None or isinstance(r, str)):
                raise TypeError(f"cache entries are (str, str | None), got ({type(t).__name__}, {type(r).__name__})")
        if rows and self.read_only:  # read-only: the results are used by the caller, not stored
            self.n_skipped += len(rows)
        elif rows:
            self._run(lambda con: con.executemany(
                "INSERT OR REPLACE INTO parses (backend, text, result, created) VALUES (?, ?, ?, ?)", rows))

    def delete(self, backend_key: str, texts: Iterable[str] | None = None) -> int:
        """Remove the entries of ``backend_key`` (all, or only ``texts``); returns how many were removed (0 when
        the cache is read-only)."""
        if self.read_only:
            return 0
        if texts is None:
            return self._run(lambda con: con.execute("DELETE FROM parses WHERE backend=?", (backend_key,)).rowcount)
        rows = [(backend_key, t) for t in texts]
        return self._run(lambda con: con.executemany("DELETE FROM parses WHERE backend=? AND text=?", rows).rowcount)

    def count(self, backend_key: str | None = None) -> int:
        """Number of stored entries (for one backend key, or in total)."""
        if backend_key is None:
            return self._run(lambda con: con.execute("SELECT COUNT(*) FROM parses").fetchone()[0])
        return self._run(lambda con: con.execute("SELECT COUNT(*) FROM parses WHERE backend=?",
                                                 (backend_key,)).fetchone()[0])

    def backend_keys(self) -> dict[str, int]:
        """``{backend_key: number of entries}`` for everything in the file."""
        return self._run(lambda con: dict(con.execute("SELECT backend, COUNT(*) FROM parses GROUP BY backend")))

    def __len__(self) -> int:
        return self.count()

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> ParseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ParseCache({str(self.path)!r})"


def open_cache(cache: "ParseCache | str | os.PathLike | bool | None") -> tuple[ParseCache | None, bool]:
    """The ``cache=`` argument of the parsing front ends as ``(cache or None, opened here)``: ``True`` -> the
    default file, a path -> that file, a :class:`ParseCache` -> itself, ``None``/``False`` -> no cache. The caller
    closes the cache when ``opened here`` is true."""
    if cache is None or cache is False:
        return None, False
    if cache is True:
        return ParseCache(), True
    if isinstance(cache, ParseCache):
        return cache, False
    return ParseCache(cache), True


def read_only_note(cache: ParseCache) -> str | None:
    """The one note a command prints when ``cache`` is read-only (what happens and what to do), else ``None``."""
    if not cache.read_only:
        return None
    return (f"the parse cache {cache.path} is read-only ({cache.read_only}): its parses are used, new parses are "
            f"not stored (to keep them, make it writable or give --cache PATH in a writable place)")
