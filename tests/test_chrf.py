"""chrF / chrF++ (syneval_nb.metrics.chrf) equal sacrebleu's CHRF on real data: the first 300 WMT21 de-en segments
of three systems, reference A and references A+B; sentence and corpus level, every option, empty segments, the
statistics protocol (segment_stats, corpus_from_stats, score_from_stats on resampled rows)."""
from __future__ import annotations

import doctest

import numpy as np
import pytest
from sacrebleu.metrics import CHRF as SacreCHRF

from syneval_nb import metrics
from syneval_nb.metrics import chrf
from syneval_nb.metrics.chrf import CHRF
from syneval_nb.textio import read_lines

N = 300
SYSTEMS = ("UEdin", "Online-W", "happypoet")
TOL = 1e-9  # on the 0-1 scale (sacrebleu's 0-100 / 100)


@pytest.fixture(scope="module")
def data(deen_dir):
    streams = [read_lines(deen_dir / f"newstest2021.de-en.ref.{k}.en")[:N] for k in "AB"]
    hyps = {s: read_lines(deen_dir / "system-outputs" / f"newstest2021.de-en.hyp.{s}.en")[:N] for s in SYSTEMS}
    return hyps, streams


def _refs(streams, nrefs):
    """(kit layout refs[i] = segment i's references, sacrebleu's streams)."""
    st = streams[:nrefs]
    return [list(t) for t in zip(*st)], st


def _sacre_stats(sb: SacreCHRF, hyps, streams) -> np.ndarray:
    return np.asarray(sb._extract_corpus_statistics(hyps, streams), dtype=float)


@pytest.mark.parametrize("word_order", [0, 2])
@pytest.mark.parametrize("nrefs", [1, 2])
def test_equals_sacrebleu_on_wmt21(data, word_order, nrefs):
    hyps_by_sys, streams = data
    refs, st = _refs(streams, nrefs)
    ours, sb = CHRF(word_order=word_order), SacreCHRF(word_order=word_order)
    for system, hyps in hyps_by_sys.items():
        got = ours.corpus_score(hyps, refs)
        assert abs(got.score - sb.corpus_score(hyps, st).score / 100) < TOL, system
        # the statistics are sacrebleu's, row for row (best reference per segment, ties: the first)
        np.testing.assert_array_equal(ours.segment_stats(hyps, refs), _sacre_stats(sb, hyps, st))
        batch = ours.sentence_scores(hyps, refs)
        want = np.array([sb.sentence_score(h, list(r)).score / 100 for h, r in zip(hyps, refs)])
        assert np.max(np.abs(batch - want)) < TOL, system
    assert got.name == ("chrF++" if word_order == 2 else "chrF")
    assert got.signature.startswith(f"{got.name}|nc:6|nw:{word_order}|beta:2|space:no|case:mixed|eff:yes|"
                                    f"nrefs:{nrefs}|version:syneval-nb-")


@pytest.mark.parametrize("opts", [dict(lowercase=True), dict(whitespace=True), dict(eps_smoothing=True),
                                  dict(lowercase=True, whitespace=True, word_order=2),
                                  dict(eps_smoothing=True, word_order=2), dict(char_order=4, word_order=1, beta=1)])
def test_options_equal_sacrebleu(data, opts):
    hyps_by_sys, streams = data
    refs, st = _refs(streams, 2)
    hyps = hyps_by_sys["Online-W"]
    ours, sb = CHRF(**opts), SacreCHRF(**opts)
    assert abs(ours.corpus_score(hyps, refs).score - sb.corpus_score(hyps, st).score / 100) < TOL
    want = np.array([sb.sentence_score(h, list(r)).score / 100 for h, r in zip(hyps, refs)])
    assert np.max(np.abs(ours.sentence_scores(hyps, refs) - want)) < TOL
    sig = ours.signature()
    assert ("case:lc" in sig) == bool(opts.get("lowercase")) and ("space:yes" in sig) == bool(opts.get("whitespace"))
    assert ("eff:no" in sig) == bool(opts.get("eps_smoothing"))


@pytest.mark.parametrize("word_order", [0, 2])
def test_empty_hypothesis_segment_in_corpus(data, word_order):
    hyps_by_sys, streams = data
    refs, st = _refs(streams, 2)
    hyps = list(hyps_by_sys["UEdin"])
    hyps[3] = hyps[100] = ""
    hyps[7] = "   "
    ours, sb = CHRF(word_order=word_order), SacreCHRF(word_order=word_order)
    assert abs(ours.corpus_score(hyps, refs).score - sb.corpus_score(hyps, st).score / 100) < TOL
    np.testing.assert_array_equal(ours.segment_stats(hyps, refs), _sacre_stats(sb, hyps, st))
    batch = ours.sentence_scores(hyps, refs)
    assert batch[3] == batch[100] == batch[7] == 0.0 == sb.sentence_score("", refs[3]).score
    assert ours.sentence_score("", refs[3]).score == 0.0  # issue 24: the worst value, not an error


def test_variable_number_of_references(data):
    hyps_by_sys, streams = data
    hyps = hyps_by_sys["happypoet"][:60]
    refs = [[a, b] if i % 3 else [a] for i, (a, b) in enumerate(zip(streams[0][:60], streams[1][:60]))]
    second = [r[1] if len(r) == 2 else None for r in refs]
    for wo in (0, 2):
        got = CHRF(word_order=wo).corpus_score(hyps, refs)
        assert abs(got.score - SacreCHRF(word_order=wo).corpus_score(hyps, [streams[0][:60], second]).score / 100) < TOL
        assert "nrefs:var" in got.signature


@pytest.mark.parametrize("word_order", [0, 2])
def test_sentence_scores_equal_sentence_score(data, word_order):
    hyps_by_sys, streams = data
    refs, _ = _refs(streams, 2)
    hyps = hyps_by_sys["UEdin"]
    m = CHRF(word_order=word_order)
    batch = m.sentence_scores(hyps, refs)
    single = np.array([m.sentence_score(h, r).score for h, r in zip(hyps, refs)])
    np.testing.assert_array_equal(batch, single)
    s = m.sentence_score(hyps[0], refs[0])
    assert len(s.hyp_counts) == len(s.matches) == 6 + word_order and 0 <= s.precision <= 1 and 0 <= s.recall <= 1


@pytest.mark.parametrize("word_order", [0, 2])
def test_corpus_from_stats_equals_corpus_score(data, word_order):
    hyps_by_sys, streams = data
    refs, _ = _refs(streams, 2)
    hyps = hyps_by_sys["Online-W"]
    m = CHRF(word_order=word_order)
    stats = m.segment_stats(hyps, refs)
    assert stats.shape == (N, 3 * (6 + word_order))
    a, b = m.corpus_from_stats(stats), m.corpus_score(hyps, refs)
    assert a.score == b.score and a.parts == b.parts and a.n == b.n == N


@pytest.mark.parametrize("word_order", [0, 2])
def test_bootstrap_resamples_equal_sacrebleu(data, word_order):
    """Summed rows of a resample, scored by score_from_stats (vectorised over resamples), equal sacrebleu's corpus
    chrF of the resampled corpus."""
    hyps_by_sys, streams = data
    refs, _ = _refs(streams, 2)
    hyps = hyps_by_sys["happypoet"]
    m, sb = CHRF(word_order=word_order), SacreCHRF(word_order=word_order)
    stats = m.segment_stats(hyps, refs)
    rng = np.random.default_rng(7)
    samples = [rng.integers(0, N, size=N) for _ in range(4)] + [rng.choice(N, size=50, replace=False)]
    got = m.score_from_stats(np.stack([stats[ix].sum(axis=0) for ix in samples]))
    for g, ix in zip(got, samples):
        want = sb.corpus_score([hyps[i] for i in ix], [[streams[k][i] for i in ix] for k in range(2)]).score / 100
        assert abs(g - want) < TOL


@pytest.mark.parametrize("eps", [False, True])
def test_score_rows_equal_sacrebleu_f_score(eps):
    """The vectorised score of arbitrary statistics rows (zeros included) is sacrebleu's _compute_f_score."""
    rng = np.random.default_rng(0)
    tot = rng.integers(0, 6, size=(500, 8, 2))
    match = np.minimum(rng.integers(0, 6, size=(500, 8)), tot.min(axis=2))
    rows = np.stack([tot[..., 0], tot[..., 1], match], axis=2).reshape(500, 24)
    m, sb = CHRF(word_order=2, eps_smoothing=eps), SacreCHRF(word_order=2, eps_smoothing=eps)
    want = np.array([sb._compute_f_score([int(x) for x in r]) / 100 for r in rows])
    np.testing.assert_array_equal(m.score_from_stats(rows), want)


def test_bad_input():
    m = CHRF()
    with pytest.raises(ValueError, match="reference 0 of segment 1 is empty"):
        m.corpus_score(["a b", "c d"], [["a b"], [""]])
    with pytest.raises(ValueError, match="empty"):
        m.sentence_score("a b", ["  "])
    with pytest.raises(ValueError):
        m.corpus_score(["a b", "c d"], [["a b"]])
    with pytest.raises(ValueError, match="no references"):
        m.sentence_score("a b", [])
    with pytest.raises(TypeError):
        m.corpus_score(["a b"], [[3]])
    with pytest.raises(ValueError, match="tokenizer"):
        CHRF(tokenizer="13a")


def test_registry_names():
    assert metrics.canonical_name("chrf") == metrics.canonical_name("chrF") == "chrF"
    for spec in ("chrF++", "chrf++", "CHRF++", "chrfpp"):
        assert metrics.canonical_name(spec) == "chrF++"
    assert metrics.get("chrF++").word_order == 2 and metrics.get("chrf").word_order == 0
    assert metrics.get("chrf", word_order=1).name == "chrF" and "nw:1" in metrics.get("chrf", word_order=1).signature()
    with pytest.raises(metrics.UnknownMetricError):
        metrics.parse_name("chrf-4")


def test_doctest():
    assert doctest.testmod(chrf).failed == 0
