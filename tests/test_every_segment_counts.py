"""Issue 24: every segment counts. A system must not gain by emptying its worst lines or by making them unparseable.

On the embedded example (``data/examples/your_system``: 30 segments, two references, the kit's parses and RST trees
of every line), for every registry metric: an empty hypothesis gets the metric's worst sentence score, and no
hypothesis fault (empty, unparsed, no RST tree) drops a segment out of the corpus score.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics.bleu import BLEU as SacreBLEU

from syneval_nb.metrics import registry as M
from syneval_nb.metrics.base import Corpus
from syneval_nb.metrics.syntactic import EPSILON
from syneval_nb.parsers.frontend import parse_strings
from syneval_nb.textio import read_lines
from syneval_nb.trees.ptb import read_ptb, read_ptb_strings
from syneval_nb.trees.rst import load_rst_jsonl

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "your_system"
TEXT_AND_TREES = [n for n in M.names() if n not in ("Learned", "Ridge")]  # (the learned ones need a model)
WORST = {"WER": 1.0, "PER": 1.0, "TER": 1.0, "HWCM": EPSILON}  # every other metric: 0.0


def worst(m) -> float:
    """The documented value of an empty hypothesis (the ``-BP`` variants: the brevity penalty of 0 words, 0; the
    ``@spacy`` variants: their family's)."""
    return WORST.get((m.name.rsplit("-", 1)[0] if m.name[-1].isdigit() else m.name).split("@")[0], 0.0)


def _system(name: str) -> dict:
    def parses(f: str) -> tuple[list, list]:
        return read_ptb_strings(EXAMPLE / "parses" / f"{f}.ptb"), load_rst_jsonl(EXAMPLE / "parses" / f"{f}.jsonl")

    hyps = read_lines(EXAMPLE / name)
    (hp, hr), (ap, ar), (bp, br) = parses(name), parses("ref.A.txt"), parses("ref.B.txt")
    refs = [list(r) for r in zip(read_lines(EXAMPLE / "ref.A.txt"), read_lines(EXAMPLE / "ref.B.txt"))]
    # the spaCy dependency parses of the @spacy variants (made here, not cached)
    hd = parse_strings(hyps, backend="spacy", cache=False)
    rd = parse_strings([r for rs in refs for r in rs], backend="spacy", cache=False)
    return dict(hyps=hyps, refs=refs, hyp_ptb=hp, ref_ptb=[list(r) for r in zip(ap, bp)], hyp_rst=hr,
                ref_rst=[list(r) for r in zip(ar, br)], hyp_dep=list(hd),
                ref_dep=[list(rd[2 * i:2 * i + 2]) for i in range(len(refs))])


@pytest.fixture(scope="module")
def literal() -> dict:
    return _system("system_literal.txt")


def _corpus(d: dict, hyps=None, hyp_ptb=None, hyp_rst=None, hyp_dep=None) -> Corpus:
    return Corpus(d["hyps"] if hyps is None else hyps, d["refs"], ref_ptb=d["ref_ptb"], ref_rst=d["ref_rst"],
                  hyp_ptb=d["hyp_ptb"] if hyp_ptb is None else hyp_ptb,
                  hyp_rst=d["hyp_rst"] if hyp_rst is None else hyp_rst, ref_dep=d["ref_dep"],
                  hyp_dep=d["hyp_dep"] if hyp_dep is None else hyp_dep)


@pytest.mark.parametrize("name", TEXT_AND_TREES)
def test_an_empty_hypothesis_gets_the_worst_sentence_score(name, literal):
    m = M.get(name)
    refs = literal["refs"][0]
    s = m.sentence_score(Corpus([""], [refs], hyp_ptb=[None], ref_ptb=[literal["ref_ptb"][0]], hyp_rst=[None],
                                ref_rst=[literal["ref_rst"][0]], hyp_dep=[None], ref_dep=[literal["ref_dep"][0]]))
    assert (s.score, s.n_missing) == (worst(m), 0)
    # and it is the worst: no real hypothesis of the example scores below it (the error rates are unbounded above;
    # for them the empty hypothesis is "every reference word deleted", 1.0)
    if m.higher_is_better:
        assert np.all(m.sentence_scores(_corpus(literal)) >= s.score)


@pytest.mark.parametrize("name", TEXT_AND_TREES)
def test_no_hypothesis_fault_drops_a_segment(name, literal):
    """Lines 3 and 7 emptied, line 11 unparsed (no parse, no RST tree): all 30 segments stay in the corpus score,
    each faulty one with the worst value."""
    m = M.get(name)
    hyps, hp, hr = list(literal["hyps"]), list(literal["hyp_ptb"]), list(literal["hyp_rst"])
    hd = list(literal["hyp_dep"])
    for i in (3, 7):
        hyps[i], hp[i], hr[i], hd[i] = "", None, None, None
    hp[11], hr[11], hd[11] = "(())", None, None
    c = _corpus(literal, hyps, hp, hr, hd)
    got = m.corpus_score(c)
    assert (got.n, got.n_missing) == (30, 0)
    seg = m.sentence_scores(c)
    assert not np.isnan(seg).any()
    if {"ptb", "rst", "dep"} & set(m.inputs):
        assert seg[[3, 7]].tolist() == [worst(m)] * 2
        # the unparsed line: the worst value of a hypothesis of its length (the -BP variants: times its penalty)
        assert seg[11] == (worst(M.get(m.name.replace("-BP", ""))) if "-BP-" not in m.name else pytest.approx(
            worst(M.get(m.name.replace("-BP", ""))) * float(m._parts(m.segment_stats(c)[11])["bp"]), abs=1e-15))
    elif m.name == "TER":  # all words of the closest reference deleted, over the average reference length
        lens = [[len(r.split()) for r in literal["refs"][i]] for i in (3, 7)]
        assert seg[[3, 7]].tolist() == pytest.approx([min(n) / np.mean(n) for n in lens], abs=1e-12)
    else:  # a text metric still reads line 11's words
        assert seg[[3, 7]].tolist() == [WORST.get(m.name, 0.0)] * 2


def test_only_a_segment_without_a_parsed_reference_is_left_out(literal):
    rp = [list(r) for r in literal["ref_ptb"]]
    rp[5] = [None, "(())"]
    c = Corpus(literal["hyps"], literal["refs"], hyp_ptb=literal["hyp_ptb"], ref_ptb=rp)
    for name in ("STM-4", "HWCM-4", "DSTM-4", "TKM", "DTKM"):
        s = M.get(name).corpus_score(c)
        assert (s.n, s.n_missing) == (30, 1), name
        assert math.isnan(M.get(name).sentence_scores(c)[5])


@pytest.mark.parametrize("how", ["blanked", "looping"])
def test_the_deletion_game_no_longer_pays(how, literal):
    """The issue's game: the literal system's 10 worst lines (by sentence BLEU) emptied, or 5 replaced by a
    180-word repetition loop that the parser cannot parse (no tree, no RST tree). The segment-level mean of STM,
    HWCM, TKM and DR does not rise; before issue 24 the blanked lines left those metrics and STM-4 rose by .12."""
    bleu = M.get("BLEU").sentence_scores(literal["hyps"], literal["refs"])
    worst = np.argsort(bleu, kind="stable")[: 10 if how == "blanked" else 5]
    hyps, hp, hr = list(literal["hyps"]), list(literal["hyp_ptb"]), list(literal["hyp_rst"])
    for i in worst:
        hyps[i] = "" if how == "blanked" else " ".join(["the library"] * 90)
        hp[i], hr[i] = None if how == "blanked" else "(())", None
    before, after = _corpus(literal), _corpus(literal, hyps, hp, hr)
    for name in ("STM-4", "HWCM-4", "TKM", "DR"):
        m = M.get(name)
        b, a = m.sentence_scores(before), m.sentence_scores(after)
        assert not np.isnan(a).any(), name
        assert a.mean() < b.mean(), (name, a.mean(), b.mean())
        # the faulty lines have the worst value and the others are unchanged
        np.testing.assert_array_equal(np.delete(a, worst), np.delete(b, worst))
        assert set(a[worst]) == {EPSILON if name.startswith("HWCM") else 0.0}
    # corpus STM-4 from summed statistics is a precision (the paper's definition): blanking the hard lines could
    # raise it; with BLEU's brevity penalty (brevity_penalty=True) it falls
    if how == "blanked":
        bp = M.get("stm", depth=4, brevity_penalty=True)
        assert bp.corpus_score(after).score < bp.corpus_score(before).score


def test_brevity_penalty_variant_is_bleus(literal):
    """``brevity_penalty=True``: the precision score times BLEU's brevity penalty over the corpus's hypothesis words
    ``c`` and closest reference lengths ``r`` (sacrebleu's own computation of the penalty as the check)."""
    c = _corpus(literal)
    plain, bp = M.get("STM-4"), M.get("STM-4", brevity_penalty=True)
    assert "bp:yes" in bp.signature() and "bp:" not in plain.signature()
    s = bp.corpus_score(c)
    hyp_len, ref_len = s.parts["hyp_len"], s.parts["ref_len"]
    # by hand: c = words of the hypothesis trees, r = the closest reference length per segment (shorter on a tie)
    n = [len(read_ptb(t).leaves()) for t in literal["hyp_ptb"]]
    rl = [min((len(read_ptb(r).leaves()) for r in rs), key=lambda x: (abs(x - h), x))
          for h, rs in zip(n, literal["ref_ptb"])]
    assert (hyp_len, ref_len) == (sum(n), sum(rl))
    sacre = SacreBLEU.compute_bleu([1] * 4, [1] * 4, hyp_len, ref_len).bp
    assert s.parts["bp"] == pytest.approx(sacre, abs=1e-12)
    assert s.score == pytest.approx(plain.corpus_score(c).score * sacre, abs=1e-12)
    # a sentence: the penalty of its own lengths; an empty hypothesis: 0
    one = bp.sentence_score(Corpus([literal["hyps"][0]], [literal["refs"][0]], hyp_ptb=[literal["hyp_ptb"][0]],
                                   ref_ptb=[literal["ref_ptb"][0]]))
    assert one.score == pytest.approx(plain.sentence_score(Corpus(
        [literal["hyps"][0]], [literal["refs"][0]], hyp_ptb=[literal["hyp_ptb"][0]],
        ref_ptb=[literal["ref_ptb"][0]])).score * SacreBLEU.compute_bleu(
        [1] * 4, [1] * 4, one.parts["hyp_len"], one.parts["ref_len"]).bp, abs=1e-12)
    assert bp.sentence_score(Corpus([""], [literal["refs"][0]], hyp_ptb=[None],
                                    ref_ptb=[literal["ref_ptb"][0]])).score == 0.0


def test_a_reference_layout_that_fits_both_ways_is_refused():
    """Issue 24: sacrebleu's 2 streams x 2 segments without ``ref_layout`` were read as the kit's layout (BLEU .510
    where sacrebleu gives 1.0). Ambiguous input is refused naming both layouts; either explicit layout is taken."""
    import sacrebleu

    from syneval_nb.metrics.base import ReferenceLayoutError

    hyps = ["the cat sat on the mat today", "a dog barked at the old postman"]
    streams = [["the cat sat on the mat today", "a dog barked at the old postman"],
               ["the cat is on the mat today", "a dog barked at the postman"]]
    with pytest.raises(ReferenceLayoutError, match="ref_layout='segments'.*ref_layout='streams'"):
        M.get("bleu").corpus_score(hyps, streams)
    with pytest.raises(ReferenceLayoutError, match="ambiguous"):
        Corpus(hyps, streams)
    ours = M.get("bleu").corpus_score(hyps, streams, ref_layout="streams").score
    assert ours == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score / 100, abs=1e-12) == 1.0
    seg = M.get("bleu").corpus_score(hyps, streams, ref_layout="segments").score
    assert seg == pytest.approx(sacrebleu.corpus_bleu(hyps, [list(t) for t in zip(*streams)]).score / 100, abs=1e-12)
    # a symmetric matrix reads the same both ways: nothing to refuse; one segment is never ambiguous
    a, d, g = "a b c d e", "d e f g h", "g h i j k"
    assert M.get("bleu").corpus_score([a, g], [[a, d], [d, g]]).score == 1.0
    assert M.get("bleu").corpus_score([a], [[a]]).score == 1.0
