"""ParseCache: hits and misses, exact keys, persistence, several processes, foreign and damaged files."""
from __future__ import annotations

import multiprocessing as mp
import sys
import sqlite3

import pytest

from _read_only import run_read_only
from syneval_nb.parsers.cache import CacheError, ParseCache, check_result, open_cache

KEY = "stanford-test/maxLength=150"


def test_hit_and_miss(tmp_path):
    with ParseCache(tmp_path / "c.sqlite") as c:
        assert c.get_many(KEY, ["A dog barks."]) == {}
        c.put(KEY, "A dog barks.", "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ barks)) (. .)))")
        got = c.get_many(KEY, ["A dog barks.", "unseen", "A dog barks."])
        assert got == {"A dog barks.": "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ barks)) (. .)))"}
        # another backend key is another namespace: a miss
        assert c.get_many("spacy-test", ["A dog barks."]) == {}
        with pytest.raises(KeyError):
            c.get(KEY, "unseen")
        assert c.get(KEY, "unseen", None) is None
        assert c.count() == 1 and c.count(KEY) == 1 and c.count("spacy-test") == 0


def test_keys_are_exact_text(tmp_path):
    # no normalisation: white space, case and Unicode composition all make different keys
    texts = ["café", "cafe\u0301", "Café", "café ", " café"]
    with ParseCache(tmp_path / "c.sqlite") as c:
        c.put_many(KEY, [(t, f"r{i}") for i, t in enumerate(texts)])
        assert c.get_many(KEY, texts) == {t: f"r{i}" for i, t in enumerate(texts)}
        assert len(c) == 5


def test_failure_is_stored_as_none_and_can_be_replaced(tmp_path):
    with ParseCache(tmp_path / "c.sqlite") as c:
        c.put(KEY, "too long", None)
        assert c.get_many(KEY, ["too long"]) == {"too long": None}  # a hit whose value is None
        c.put(KEY, "too long", "(ROOT (X (SYM x)))")  # a retry that succeeded replaces it
        assert c.get(KEY, "too long") == "(ROOT (X (SYM x)))"
        assert c.count(KEY) == 1


def test_many_texts_and_persistence(tmp_path):
    path = tmp_path / "c.sqlite"
    items = [(f"sentence {i}", f"(ROOT (NN s{i}))") for i in range(1234)]  # > one 500-text SELECT chunk
    with ParseCache(path) as c:
        c.put_many(KEY, items)
    with ParseCache(path) as c:  # reopened: everything is still there
        got = c.get_many(KEY, [t for t, _ in items] + ["missing"])
        assert len(got) == 1234 and got["sentence 1233"] == "(ROOT (NN s1233))"
        assert c.backend_keys() == {KEY: 1234}
        assert c.delete(KEY, ["sentence 0", "sentence 1"]) == 2
        assert c.count(KEY) == 1232


def test_put_stores_immediately(tmp_path):
    # a second connection (another process in real life) sees each put at once, without close()
    path = tmp_path / "c.sqlite"
    writer = ParseCache(path)
    reader = ParseCache(path)
    for i in range(3):
        writer.put(KEY, f"s{i}", f"r{i}")
        assert reader.count(KEY) == i + 1
    writer.close()
    reader.close()


def test_wal_mode(tmp_path):
    path = tmp_path / "c.sqlite"
    ParseCache(path).close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def _writer(path: str, w: int, n: int) -> None:
    with ParseCache(path) as c:
        for i in range(n):
            c.put(KEY, f"w{w} s{i}", f"r{w}.{i}")


def test_several_processes_write_at_once(tmp_path):
    path = str(tmp_path / "c.sqlite")
    ParseCache(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)  # spawned interpreters start slowly on a loaded 2-core machine
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with ParseCache(path) as c:
        assert c.count(KEY) == 450
        assert c.get(KEY, "w2 s149") == "r2.149"


def test_not_sqlite_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("this is a text file, not a database\n" * 50)
    with pytest.raises(CacheError, match="not a usable syneval-nb parse cache"):
        ParseCache(path)


def test_foreign_sqlite_is_a_clear_error(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE songs (title TEXT)")
    con.commit()
    con.close()
    with pytest.raises(CacheError, match=r"foreign SQLite database \(tables: songs\)"):
        ParseCache(path)
    con = sqlite3.connect(path)  # the other program's file is left as it was (not switched to WAL)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()


def test_damaged_file_is_a_clear_error(tmp_path):
    path = tmp_path / "c.sqlite"
    with ParseCache(path) as c:
        c.put_many(KEY, [(f"s{i}", "x" * 200) for i in range(2000)])
    con = sqlite3.connect(path)  # fold the WAL into the main file so the damage hits the data pages
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 40_000
    data[8192:24576] = b"\xa5" * 16384  # overwrite pages 3-6
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError, match="not a usable syneval-nb parse cache"):
        ParseCache(path)


def test_rejects_non_string_results(tmp_path):
    with ParseCache(tmp_path / "c.sqlite") as c, pytest.raises(TypeError, match="str | None"):
        c.put(KEY, "s", {"tree": 1})  # type: ignore[arg-type]


def test_open_cache_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNEVAL_NB_CACHE", str(tmp_path / "default"))
    assert open_cache(None) == (None, False) and open_cache(False) == (None, False)
    c, owned = open_cache(True)  # the default file, opened here: the caller closes it
    assert owned and c.path == tmp_path / "default" / "parses.sqlite"
    c.close()
    mine = ParseCache(tmp_path / "mine.sqlite")
    assert open_cache(mine) == (mine, False)  # the caller's own cache is not closed for it
    c, owned = open_cache(tmp_path / "p.sqlite")
    assert owned and c.path == tmp_path / "p.sqlite"
    c.close()
    mine.close()


# ---------------------------------------------------------------------------------- issue 13: damaged entries
STANFORD = "stanford-lexparser-3.3.1/englishPCFG/test"
GOOD_PTB = "(ROOT (S (NP (NNS Cats)) (VP (VBP sleep)) (. .)))"


@pytest.mark.parametrize("result, why", [
    ("(ROOT (S (NP (NNS Cats)) (VP (VBP sleep)) (. .))", "1 bracket(s) left open"),
    ("Cats sleep.", "expected '(' but found the word 'Cats'"),
    ("", "a tree without words"),
    ("(ROOT (-NONE- *))", "a tree without words"),
    (GOOD_PTB + "\n" + GOOD_PTB, "a parse must be one line"),
    # a row written before stanford.classify: the fallback is parsed again (and then stored as a failure)
    ("(X (X Cats) (X sleep) (X .))", "Stanford's flat X fallback, which is no parse"),
])
def test_check_result_refuses_damaged_ptb(result, why):
    got = check_result(STANFORD, result)
    assert got is not None and why in got and f"(cached {result[:60]!r}" in got


def test_check_result_accepts_valid_results():
    assert check_result(STANFORD, GOOD_PTB) is None
    assert check_result(STANFORD, "(())") is None  # the parser's own "no parse" marker
    assert check_result(STANFORD, None) is None  # a stored failure
    assert check_result("rst:feng-hirst-0.1.4|x", '{"label": "EDU", "children": ["Cats sleep ."]}') is None
    assert check_result("spacy-3.8/x", '{"words": ["Cats", "sleep"], "tags": ["NNS", "VBP"], "heads": [1, -1], '
                                       '"deps": ["nsubj", "ROOT"]}') is None
    assert check_result("another-backend/1", "anything at all") is None  # opaque strings of other callers


def test_check_result_refuses_damaged_rst_and_spacy():
    rst = "rst:feng-hirst-0.1.4|x"
    assert check_result(rst, '{"label": "Joint[N][N]", "children": ["a"]}').startswith(
        "tree: label 'Joint[N][N]' gives 2 nuclearities for 1 children")
    assert check_result(rst, '{"label": "EDU", "chil').startswith("Unterminated string")
    assert check_result("spacy-3.8/x", '{"words": ["a"], "tags": ["DT"], "heads": [4]}').startswith(
        "word 0 ('a') has head 4, expected -1 or another word 0..0")
    assert check_result("spacy-3.8/x", '{"words": ["a"]}').startswith("missing field 'tags'")


def test_damaged_entries_are_misses_and_listed(tmp_path):
    with ParseCache(tmp_path / "c.sqlite") as c:
        c.put_many(STANFORD, [("Cats sleep.", GOOD_PTB), ("Dogs bark.", "(ROOT (S"), ("Too long.", None)])
        got = c.get_many(STANFORD, ["Cats sleep.", "Dogs bark.", "Too long."])
        assert got == {"Cats sleep.": GOOD_PTB, "Too long.": None}
        assert list(c.last_rejected) == ["Dogs bark."] and c.n_rejected == 1
        with pytest.raises(KeyError):
            c.get(STANFORD, "Dogs bark.")
        assert c.n_rejected == 2  # counted each time it is met
        assert c.get_many(STANFORD, ["Dogs bark."], validate=False) == {"Dogs bark.": "(ROOT (S"}
        bark = GOOD_PTB.replace("Cats", "Dogs").replace("sleep", "bark")
        c.put(STANFORD, "Dogs bark.", bark)  # a new parse replaces it
        assert c.get_many(STANFORD, ["Dogs bark."]) == {"Dogs bark.": bark}
        assert c.last_rejected == {}


def test_a_valid_tree_of_another_sentence_is_a_miss(tmp_path):
    """Issue 24: a cache row holding a valid tree for other words is rejected (and so parsed again); PTB
    tokenization and escaping are not differences."""
    with ParseCache(tmp_path / "c.sqlite") as c:
        c.put_many(STANFORD, [("Dogs bark.", GOOD_PTB), ("Cats (3 ½) sleep.",
                                                          "(ROOT (S (NP (NNS Cats) (PRN (-LRB- -LRB-) (CD 3) (CD 1/2) "
                                                          "(-RRB- -RRB-))) (VP (VBP sleep)) (. .)))")])
        got = c.get_many(STANFORD, ["Dogs bark.", "Cats (3 ½) sleep."])
        assert list(got) == ["Cats (3 ½) sleep."]
        assert c.last_rejected == {"Dogs bark.": "the tree holds the words of another sentence (cached "
                                                 f"{GOOD_PTB[:60]!r}{'...' if len(GOOD_PTB) > 60 else ''})"}


def test_checks_cover_the_kits_backend_keys():
    """The checks are chosen by key prefix: every backend of the kit must be covered (a key that changes its
    prefix would silently lose the check)."""
    from syneval_nb.parsers import feng_hirst
    from syneval_nb.parsers import spacy as spacy_parser
    from syneval_nb.parsers import stanford
    from syneval_nb.parsers.cache import CHECKS

    keys = [stanford.StanfordParser().backend_key, spacy_parser.spacy_backend_key(), feng_hirst.backend_key(),
            feng_hirst.backend_key(global_features=True)]
    assert [[p for p in CHECKS if k.startswith(p)] for k in keys] == [["stanford-lexparser"], ["spacy-"],
                                                                          ["rst:"], ["rst:"]]


# -- read-only caches, folders (issue 24) ---------------------------------------------------------------------------

_READ = """
import sys
from syneval_nb.parsers.cache import ParseCache
c = ParseCache(sys.argv[1])
print(repr(c.read_only), c.get_many({key!r}, ["A dog barks.", "unseen"]))
c.put({key!r}, "unseen", "(ROOT (NP (NN unseen)))")
print(c.n_skipped, c.count(), c.delete({key!r}))
""".format(key=KEY)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_healthy_read_only_cache_is_read_and_not_written(tmp_path, what):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite"
    with ParseCache(path) as c:
        c.put(KEY, "A dog barks.", "(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ barks)) (. .)))")
    r = run_read_only(folder if what == "folder" else path, sys.executable, "-c", _READ, str(path))
    assert r.returncode == 0, r.stderr
    why = f"'its folder {folder} is read-only'" if what == "folder" else "'the file is read-only'"
    assert r.stdout.splitlines() == [
        f"{why} {{'A dog barks.': '(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ barks)) (. .)))'}}", "1 1 0"]


def test_a_new_cache_in_a_read_only_folder_names_the_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    code = "import sys\nfrom syneval_nb.parsers.cache import ParseCache, CacheError\ntry:\n ParseCache(sys.argv[1])\n" \
           "except CacheError as e:\n print(e)"
    r = run_read_only(folder, sys.executable, "-c", code, str(folder / "new.sqlite"))
    assert r.stdout.strip() == (f"cannot create the parse cache {folder / 'new.sqlite'}: the folder {folder} is "
                                "read-only; give --cache PATH in a writable place, or --no-cache"), r.stderr


def test_a_folder_is_not_a_cache(tmp_path):
    with pytest.raises(CacheError, match=f"the parse cache {tmp_path} is a folder: give the cache file's path"):
        ParseCache(tmp_path)


def test_parse_with_a_read_only_cache_says_so(tmp_path):
    """Issue 37: ``syneval-nb parse --cache`` on a read-only cache gave rc 0, stored nothing and said nothing; it
    now prints the one note ``score`` and ``report`` print (and still parses)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite"
    ParseCache(path).close()
    src = tmp_path / "in.txt"
    src.write_text("A dog barks.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    r = run_read_only(folder, sys.executable, "-m", "syneval_nb.app.cli", "parse", str(src), "-o", str(out),
                      "--backend", "spacy", "--cache", str(path), "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"syneval-nb parse: note: the parse cache {path} is read-only (its folder {folder} is read-only): its parses "
        "are used, new parses are not stored (to keep them, make it writable or give --cache PATH in a writable place)")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    with ParseCache(path) as c:
        assert c.count() == 0
