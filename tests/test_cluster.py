"""Parsing and scoring on a real Dask cluster (issue 16.2): a ``distributed.LocalCluster`` on 127.0.0.1 with two
worker processes of one thread each, started once for the module (each worker starts its JVM on its first chunk).

Checked: cluster output equals the local backend's line for line (Stanford, RST), cached lines are never sent
(the workers' own counters), a worker killed mid-run (SIGKILL) does not lose or change anything, scores of three
systems are identical to the local run (syntactic and lexical), the CLI flag, and that Dask is not imported
without a scheduler. Where another test asserts that the local path gives the shipped parses or trees of the very
lines used here (named at each use), the cluster's output is compared with the shipped data, and no local JVM is
started for it (issue 38).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from syneval_nb.parsers import dask as cluster
from syneval_nb import metrics
from syneval_nb.metrics import lexical
from syneval_nb.app import parse as parse_command
from syneval_nb.parsers import feng_hirst
from syneval_nb.parsers import frontend
from syneval_nb.parsers import spacy as spacy_parser
from syneval_nb.trees import rst
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.stanford import StanfordParser
from syneval_nb.parsers.frontend import parse, parse_strings
from syneval_nb.textio import read_lines as read_sentences
from syneval_nb.trees import read_ptb

REF_A = "newstest2021.de-en.ref.A.en"
REF_B = "newstest2021.de-en.ref.B.en"
PTB_DIR = "parses/stanford-pcfg-3.3.1"
SYSTEMS = ("Facebook-AI", "Online-W", "happypoet")
N_SCORE = 200  # segments scored per system
# ref A's lines whose local Stanford parse tests/test_parsing.py asserts to be the shipped one: 0 and 2
# (test_identity_with_shipped_parses), the eight of test_killed_worker_is_restarted_and_batch_goes_on and the ten of
# test_resume_after_interrupted_cli_run; the cluster's parses of them are compared with the shipped parses
LOCAL_IS_SHIPPED = (0, 2, 9, 11, 13, 26, 27, 35, 39, 40, 41, 46, 48, 49, 53, 54, 58, 65, 71, 81)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's resource warnings at start-up
        lc = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=logging.ERROR)
    c = Client(lc, set_as_default=False)
    try:
        yield c
    finally:
        c.close()
        lc.close()


@pytest.fixture(scope="module")
def ref_a(deen_dir) -> list[str]:
    return read_sentences(deen_dir / REF_A)


@pytest.fixture(scope="module")
def shipped_a(deen_dir) -> list[str]:
    return read_sentences(deen_dir / PTB_DIR / f"{REF_A}.ptb")


@pytest.fixture(scope="module")
def lines20(ref_a) -> list[str]:
    return [ref_a[i] for i in LOCAL_IS_SHIPPED]


@pytest.fixture(scope="module")
def shipped20(shipped_a) -> list[str]:
    return [shipped_a[i] for i in LOCAL_IS_SHIPPED]


@pytest.fixture(scope="module")
def shipped_rst_a(deen_dir) -> list[dict | None]:
    from syneval_nb.data import RST_DIR

    return rst.load_rst_jsonl(deen_dir / RST_DIR / f"{REF_A}.jsonl")


@pytest.fixture(scope="module")
def package_rst(ref_a, lines20) -> list[dict | None]:
    """The RST trees of ref A's lines 6..9 and of the last six of ``lines20`` by the package's own syntax step
    (``syntax="package"``: the two-program path before issue 23), parsed here once for the two tests that compare
    the cluster with it."""
    return frontend.parse_rst(ref_a[6:10] + lines20[14:], workers=1, cache=None, progress=False, syntax="package")


@pytest.fixture(scope="module")
def cache_path(tmp_path_factory):
    return tmp_path_factory.mktemp("cluster") / "parses.sqlite"


def _items(counts: dict) -> int:
    return sum(c.get("items", 0) for c in counts.values())


def test_dask_not_imported_without_scheduler():
    code = ("import sys, syneval_nb.parsers.frontend, syneval_nb.parsers.feng_hirst, syneval_nb.metrics.discourse, syneval_nb.metrics.syntactic, syneval_nb.metrics.lexical\n"
            "print(sorted(m for m in ('dask', 'distributed', 'syneval_nb.parsers.dask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_scheduler_is_a_clear_error():
    with pytest.raises(cluster.ClusterError, match="not a Dask scheduler address"):
        parse_strings(["A sentence ."], cache=None, scheduler="localhost")
    with pytest.raises(TypeError, match="distributed.Client"):
        parse_strings(["A sentence ."], cache=None, scheduler=8786)


@pytest.mark.slow
def test_stanford_on_cluster_equals_local(client, lines20, shipped20, cache_path):
    """The local parse of these 20 lines is their shipped parse (tests/test_parsing.py asserts it, see
    LOCAL_IS_SHIPPED), so the cluster's output is compared with the shipped parses, and its backend key with the
    local parser's (issue 38)."""
    sents = lines20  # chunks of 2: both workers get several
    assert len(set(sents)) == 20
    with ParseCache(cache_path) as cache:
        remote = parse_strings(sents, cache=cache, scheduler=client, progress=False)
        assert cache.count(remote.report.backend_key) == 20
    assert list(remote) == shipped20  # = the local parse (tests/test_parsing.py, LOCAL_IS_SHIPPED)
    assert (remote.report.n_parsed, remote.report.n_cached, remote.report.failures) == (20, 0, {})
    assert remote.report.backend_key == StanfordParser(workers=1).backend_key  # no JVM: the key is the options
    counts = cluster.worker_counts(client)
    assert len(counts) == 2 and _items(counts) == 20
    assert all(c["items"] > 0 for c in counts.values())  # both workers parsed


@pytest.mark.slow
def test_cached_lines_are_never_sent(client, lines20, cache_path):
    before = cluster.worker_counts(client)
    with ParseCache(cache_path) as cache:
        again = parse_strings(lines20, cache=cache, scheduler=client.scheduler.address, progress=False)
        assert (again.report.n_cached, again.report.n_parsed) == (20, 0)
        assert cluster.worker_counts(client) == before  # no task was sent
        # two new lines among cached ones (one of them twice): only the two new texts travel
        new = ["The cluster parses this one .", "And this one too ."]
        mixed = lines20[:5] + new + lines20[5:10] + new[:1]
        res = parse(mixed, cache=cache, scheduler=client, progress=False)
        assert (res.report.n_cached, res.report.n_parsed) == (10, 3)
    assert _items(cluster.worker_counts(client)) == _items(before) + 2
    assert res[5] == read_ptb("(ROOT (S (NP (DT The) (NN cluster)) (VP (VBZ parses) (NP (DT this) (NN one))) (. .)))")
    assert res[5] == res[12]


# Before the two tests that kill workers: the Stanford JVMs the workers started for the tests above parse the 18
# sentences here (after the kills, the two restarted workers would each start one for this test alone; issue 38).
@pytest.mark.slow
def test_score_cli_scheduler_flag(client, deen_dir, tmp_path, capsys):
    """``syneval-nb score --scheduler``: the parses are made on the cluster (workers' counters move), the JSON
    equals a local run that reads the same sentences from the cache it filled; an unreachable scheduler is one
    line and exit 2."""
    import json as _json

    from syneval_nb.app import score as score_mod
    lines = {f: (deen_dir / f).read_text(encoding="utf-8").splitlines()[100:106]
             for f in (REF_A, REF_B, "system-outputs/newstest2021.de-en.hyp.Online-W.en")}
    paths = {}
    for f, ls in lines.items():
        paths[f] = tmp_path / Path(f).name
        paths[f].write_text("".join(s + "\n" for s in ls), encoding="utf-8")
    db = tmp_path / "c.sqlite"
    base = ["-r", str(paths[REF_A]), str(paths[REF_B]), "-i",
            str(paths["system-outputs/newstest2021.de-en.hyp.Online-W.en"]), "-m", "bleu,stm,hwcm",
            "--format", "json", "--n-bootstrap", "0", "--cache", str(db), "-q"]
    before = _items(cluster.worker_counts(client))
    assert score_mod.cli(base + ["--scheduler", client.scheduler.address]) == 0
    remote = _json.loads(capsys.readouterr().out)
    assert _items(cluster.worker_counts(client)) > before  # the 18 sentences went to the workers
    with ParseCache(db) as c:
        assert c.count() == 18
    assert score_mod.cli(base) == 0  # local, everything from the cache the cluster run filled
    assert _json.loads(capsys.readouterr().out) == remote
    # everything cached: no task is sent, so the scheduler is not even contacted; without the cache it must be
    nocache = [a for a in base if a not in ("--cache", str(db))] + ["--no-cache"]
    assert score_mod.cli(nocache + ["--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("syneval-nb score:")


class _Killer(threading.Thread):
    """SIGKILL process ``victim`` as soon as the cache at ``db`` holds ``after`` results of ``key``; ``seen`` keeps
    what the cache held at that moment."""

    def __init__(self, db, key: str, texts: list[str], victim: int, after: int = 4) -> None:
        super().__init__()
        self.db, self.key, self.texts, self.victim, self.after = db, key, texts, victim, after
        self.seen: dict = {}
        self.stop = threading.Event()

    def run(self) -> None:
        with ParseCache(self.db) as watch:
            while not self.stop.is_set():
                if watch.count(self.key) >= self.after:
                    self.seen.update(watch.get_many(self.key, self.texts))
                    os.kill(self.victim, signal.SIGKILL)
                    return
                time.sleep(0.05)


def _set_allowed_failures(n: int, dask_scheduler=None) -> int:
    old, dask_scheduler.allowed_failures = dask_scheduler.allowed_failures, n
    return old


@pytest.mark.slow
def test_worker_killed_mid_run(client, ref_a, shipped_a, tmp_path):
    """SIGKILL one worker process once the first results are cached: Dask reschedules its chunks, the run
    completes with the same parses, and what was cached before the kill is still there, unchanged."""
    sents = ref_a[40:80]
    victim = sorted(client.run(os.getpid).values())[0]
    key = StanfordParser().backend_key
    killer = _Killer(tmp_path / "kill.sqlite", key, sents, victim)
    with ParseCache(tmp_path / "kill.sqlite") as cache:
        killer.start()
        try:
            res = parse_strings(sents, cache=cache, scheduler=client, progress=False)
        finally:
            killer.stop.set()
            killer.join()
        assert 4 <= len(killer.seen) < 40  # the kill happened mid-run
        assert list(res) == shipped_a[40:80]
        assert res.report.failures == {}
        assert cache.count(key) == 40
        assert {s: cache.get(key, s) for s in killer.seen} == killer.seen
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it


@pytest.mark.slow
def test_worker_deaths_beyond_allowed_failures(client, ref_a, shipped_a, tmp_path):
    """With the scheduler's allowed-failures at 0, the chunk a killed worker was running fails: the call raises a
    ClusterError that says so and how to resume, and the results cached before stay (and are right)."""
    sents = ref_a[100:140]
    victim = sorted(client.run(os.getpid).values())[0]
    key = StanfordParser().backend_key
    killer = _Killer(tmp_path / "fail.sqlite", key, sents, victim)
    old = client.run_on_scheduler(_set_allowed_failures, 0)
    try:
        with ParseCache(tmp_path / "fail.sqlite") as cache:
            killer.start()
            try:
                with pytest.raises(cluster.ClusterError, match=r"died 1 time\(s\).*re-run to resume"):
                    parse_strings(sents, cache=cache, scheduler=client, progress=False)
            finally:
                killer.stop.set()
                killer.join()
            kept = cache.get_many(key, sents)
        assert 4 <= len(killer.seen) <= len(kept) < 40
        assert {s: kept[s] for s in killer.seen} == killer.seen
        assert all(kept[s] == shipped_a[100 + i] for i, s in enumerate(sents) if s in kept)
    finally:
        assert client.run_on_scheduler(_set_allowed_failures, old) == 0
        client.wait_for_workers(2, timeout=60)


@pytest.mark.slow
def test_rst_on_cluster_equals_local(client, ref_a, shipped_rst_a, tmp_path):
    """The local path's trees of these 6 lines (``parse_rst`` with the kit's syntax step) are their shipped trees
    (tests/test_rst_crf.py::test_trees_equal_shipped_ted_and_deen parses ref A's first 6 lines locally and asserts
    it), so the cluster's trees are compared with the shipped ones (issue 38)."""
    texts = ref_a[:6]  # 2, 2, 1, 3, 2, 2 EDUs in the shipped trees
    with ParseCache(tmp_path / "rst.sqlite") as cache:
        remote = frontend.parse_rst(texts, cache=cache, progress=False, scheduler=client)
        assert cache.count(feng_hirst.backend_key()) == 6
    assert remote == shipped_rst_a[:6]  # = the local path's (test_rst_crf.py::test_trees_equal_shipped_ted_and_deen)
    assert [rst.n_edus(t) for t in remote] == [2, 2, 1, 3, 2, 2]


def _jvm_commands(dask_worker=None) -> list[str]:
    """The command lines of the Java processes under this Dask worker's process."""
    out = subprocess.run(["ps", "-ww", "-eo", "ppid=,args="], capture_output=True, text=True).stdout.splitlines()
    me = str(os.getpid())
    return [a for p, a in (ln.strip().split(None, 1) for ln in out if ln.strip()) if p == me and "java" in a]


@pytest.mark.slow
def test_rst_syntax_step_on_the_cluster_workers(client, ref_a, package_rst, tmp_path):
    """Issue 23: parse_rst on the cluster: the RST parser's sentences are parsed by the workers' kit
    ParserDemo JVMs (one per worker) and cached by the client, the workers' RST parsers start no JVM of their
    own (the package's is `java -Xmx1000m ... ParserDemo`), and the trees equal the package's local path."""
    from syneval_nb.parsers.stanford import deps_backend_key

    texts = ref_a[6:10]
    local = package_rst[:4]  # frontend.parse_rst(texts, workers=1, cache=None, progress=False, syntax="package")
    with ParseCache(tmp_path / "kit.sqlite") as cache:
        remote = frontend.parse_rst(texts, cache=cache, progress=False, scheduler=client)
        assert cache.count(deps_backend_key()) >= 4
        assert cache.count(feng_hirst.backend_key()) == 4
    assert remote == local
    jvms = client.run(_jvm_commands)
    for worker, cmds in jvms.items():
        assert not any("-Xmx1000m" in c for c in cmds), (worker, cmds)
        assert sum(c.endswith(" ParserDemo") for c in cmds) <= 1, (worker, cmds)
    # the client parsed nothing itself: no ParserDemo JVM of its own (the records above came from the workers)
    assert not any(c.endswith(" ParserDemo") for c in _jvm_commands()), _jvm_commands()


@pytest.mark.slow
def test_one_parse_for_both_families_on_the_cluster_workers(client, lines20, shipped20, package_rst, tmp_path):
    """Issue 23: metrics.prepare with ptb and rst on the cluster: each worker's one SynevalParser JVM parses the
    lines once for both (the client caches the one-line trees and the records; none runs on the client), and the
    trees equal the local two-program path's: its RST trees are ``package_rst`` (the package's syntax step, made
    once for this test and the one above), its one-line trees the local Stanford parses, which on these lines are
    the shipped ones (tests/test_parsing.py asserts it, see LOCAL_IS_SHIPPED), so no local JVM is started here
    (issue 38)."""
    from syneval_nb.metrics import Corpus, prepare
    from syneval_nb.parsers.stanford import DEFAULT_MAX_LENGTH, deps_backend_key

    hyps, refs = lines20[14:17], [[r] for r in lines20[17:20]]
    remote = Corpus(hyps, refs)
    with ParseCache(tmp_path / "both.sqlite") as cache:
        prepare([remote], ("ptb", "rst"), cache=cache, progress=False, scheduler=client)
        assert cache.count(StanfordParser().backend_key) == 6
        assert set(cache.get_many(deps_backend_key(), lines20[14:])) == set(lines20[14:])
    # the local two-program path's trees: prepare([Corpus(hyps, refs)], ("ptb", "rst"), cache=None,
    # rst_syntax="package") fills hyp_ptb / ref_ptb with the local one-line parses and hyp_rst / ref_rst with
    # parse_rst(..., syntax="package")
    local = (shipped20[14:17], [[p] for p in shipped20[17:20]], package_rst[4:7], [[t] for t in package_rst[7:10]])
    assert (remote.hyp_ptb, remote.ref_ptb, remote.hyp_rst, remote.ref_rst) == local
    jvms = client.run(_jvm_commands)
    both = {w: sum(c.endswith(f" SynevalParser {DEFAULT_MAX_LENGTH} The syneval-sentinel") for c in cmds)
            for w, cmds in jvms.items()}
    assert max(both.values()) == 1 and sum(both.values()) >= 1, jvms  # one per worker that got work, for both uses
    assert not any("SynevalParser" in c for c in _jvm_commands()), _jvm_commands()  # none on the client


@pytest.mark.slow
def test_cli_scheduler_flag(client, lines20, shipped20, cache_path, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("".join(s + "\n" for s in lines20[:6]), encoding="utf-8")
    out = tmp_path / "out.ptb"
    before = cluster.worker_counts(client)
    rc = parse_command.cli([str(src), "-o", str(out), "--cache", str(cache_path), "--quiet",
                      "--scheduler", client.scheduler.address])
    assert rc == 0
    assert out.read_text(encoding="utf-8").splitlines() == shipped20[:6]
    assert cluster.worker_counts(client) == before  # all six were cached by the first test
    rc = parse_command.cli([str(src), "-o", str(out), "--no-cache", "--quiet", "--scheduler", "tcp://127.0.0.1:9"])
    assert rc == 2


@pytest.fixture(scope="module")
def systems_text(deen_dir):
    hyps = {s: read_sentences(deen_dir / "system-outputs" / f"newstest2021.de-en.hyp.{s}.en")[:N_SCORE]
            for s in SYSTEMS}
    refs = [list(r) for r in zip(read_sentences(deen_dir / REF_A)[:N_SCORE],
                                 read_sentences(deen_dir / REF_B)[:N_SCORE])]
    return hyps, refs


@pytest.mark.slow
def test_score_rows_on_cluster_identical(client, systems_text):
    """The one scoring loop (metrics.score_rows -> score_systems) with a scheduler: one task per system, the same
    numbers and signatures as the local run."""
    hyps_by, refs1 = systems_text
    hyps = [h for s in SYSTEMS for h in hyps_by[s]]
    refs = refs1 * len(SYSTEMS)
    labels = [s for s in SYSTEMS for _ in range(N_SCORE)]

    def make():
        return {name: cls() for name, cls in lexical.ALL_METRICS.items()} | {"chrF": metrics.get("chrF")}

    m_local, m_remote = make(), make()
    local = metrics.score_rows(m_local, hyps, refs, labels)
    remote = metrics.score_rows(m_remote, hyps, refs, labels, scheduler=client)
    pd.testing.assert_frame_equal(remote[0], local[0], check_exact=True)
    pd.testing.assert_frame_equal(remote[1], local[1], check_exact=True)
    assert {k: m.signature() for k, m in m_remote.items()} == {k: m.signature() for k, m in m_local.items()}
    assert "nrefs:2" in m_remote["BLEU"].signature()
    # corpus BLEU of one system against sacrebleu (independent implementation)
    import sacrebleu

    bleu = sacrebleu.corpus_bleu(hyps_by["Online-W"], [[r[0] for r in refs1], [r[1] for r in refs1]])
    assert np.isclose(remote[1].loc["Online-W", "BLEU"], bleu.score / 100, atol=1e-9)


@pytest.mark.slow
def test_spacy_on_cluster_equals_local(client, ref_a, tmp_path):
    sents = ref_a[:10]
    local = parse_strings(sents, backend="spacy", cache=None, progress=False)
    with ParseCache(tmp_path / "spacy.sqlite") as cache:
        remote = parse_strings(sents, backend="spacy", cache=cache, scheduler=client, progress=False)
        assert cache.count(spacy_parser.spacy_backend_key()) == 10
    assert list(remote) == list(local) and None not in remote


@pytest.mark.slow
def test_depth_study_on_cluster_identical(client, ted_dir):
    """The chapter study that loops over systems (studies.depth_study.score -> depth_study.depth_scores: BLEU_n via
    metrics.score_rows, STM/HWCM/... per system) gives the same numbers on the cluster as locally."""
    from syneval_nb import data
    from syneval_nb.studies import depth_study

    ted = data.load_ted_zhen_mqm(ted_dir)
    mt = data.sample_segments(ted[~ted["is_human"]].copy(), 12, 0)
    frame = mt.assign(reference=mt["refB"], ptb_reference=mt["ptb_refB"])
    local = depth_study.score(frame, ("STM", "HWCM", "TKM"), max_depth=4, progress=False)
    remote = depth_study.score(frame, ("STM", "HWCM", "TKM"), max_depth=4, progress=False, scheduler=client)
    assert set(remote.segment) == set(local.segment) and ("STM", 4) in local.segment
    for k in local.segment:
        np.testing.assert_array_equal(remote.segment[k], local.segment[k])
    pd.testing.assert_frame_equal(remote.corpus, local.corpus, check_exact=True)
    assert len(local.frame) == 12 * 13 - local.dropped and local.segment[("STM", 4)].shape == (len(local.frame),)
