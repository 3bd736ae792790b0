"""chrF and chrF++: character n-gram F-score (Popović 2015) and its word n-gram extension (Popović 2017).

Papers: Maja Popović (2015), "chrF: character n-gram F-score for automatic MT evaluation", WMT; Maja Popović
(2017), "chrF++: words helping character n-grams", WMT. The definition is sacrebleu's (``sacrebleu.metrics.chrf``,
one file per metric as there), number for number; the n-gram extraction is sacrebleu's own helpers
(``extract_all_char_ngrams``, ``extract_word_ngrams``), imported rather than copied.

Definition in words: for every character n-gram order n = 1..``char_order`` (whitespace removed unless
``whitespace=True``) and every word n-gram order n = 1..``word_order`` (words split on whitespace, a punctuation
mark at the end -- or else at the start -- of a word split off), count the hypothesis n-grams, the reference
n-grams and the matches (clipped counts); precision = matches / hypothesis n-grams, recall = matches / reference
n-grams. With sacrebleu's default (``eps_smoothing=False``, signature ``eff:yes``) the precisions and recalls are
averaged over the orders where both the hypothesis and the reference have n-grams (the effective order, as
sacreBLEU < 2.0.0), and chrF = (1 + beta^2) P R / (beta^2 P + R) of the averages (0 if both are 0). With
``eps_smoothing=True`` (``eff:no``; the chrF++.py / Moses / NLTK smoothing) chrF is the mean over all orders of the
per-order F-beta, an empty order's precision/recall being 1e-16. ``beta=2`` weighs recall twice as much as precision.

Statistics row (sacrebleu's layout): per order, char orders first, then word orders, the triplet
``[hyp n-grams, ref n-grams, matches]`` -- ``3 * (char_order + word_order)`` columns. The hypothesis count of an
order is 0 when the reference has no n-gram of that order (sacrebleu). Several references: the row of the
reference with the best sentence-level score (ties: the first), as sacrebleu's ``_compute_segment_statistics``.
The corpus score is computed from the summed rows, a sentence score from one row; ``score_from_stats`` (vectorised
over rows) serves ``sentence_scores`` and bootstrap resampling.

Scale: ``score`` is on the kit's 0-1 scale -- sacrebleu's chrF (0-100) divided by 100.

Options: ``char_order`` (6), ``word_order`` (0 = chrF; 2 = chrF++, named ``"chrF++"``; any other value keeps the
name ``"chrF"`` and the signature's ``nw`` field tells), ``beta`` (2), ``lowercase`` (False), ``whitespace``
(False: spaces are not part of character n-grams), ``eps_smoothing`` (False). chrF reads the raw text, as
sacrebleu gets it: the kit's ``tokenizer`` option does not apply (only ``"none"`` is accepted). The signature
mirrors sacrebleu's fields: ``chrF|nc:6|nw:0|beta:2|space:no|case:mixed|eff:yes|nrefs:1|version:...``.

Empty input follows the lexical module's policy: an empty reference raises :class:`ValueError`; an empty hypothesis
raises in ``sentence_score`` but is an ordinary segment (score 0, sacrebleu's statistics) in ``corpus_score``,
``sentence_scores`` and ``segment_stats``.

>>> m = CHRF()
>>> round(m.sentence_score("The cat sat on the mat.", ["The cat is on the mat."]).score, 6)
0.671727
>>> pp = CHRF(word_order=2)
>>> pp.name, round(pp.corpus_score(["The cat sat on the mat."], [["The cat is on the mat."]]).score, 6)
('chrF++', 0.69437)
>>> pp.signature().split("|version")[0]
'chrF++|nc:6|nw:2|beta:2|space:no|case:mixed|eff:yes|nrefs:1'
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from sacrebleu.metrics.helpers import extract_all_char_ngrams, extract_word_ngrams

from syneval_nb.metrics.base import Corpus
from syneval_nb.metrics.lexical import LexicalMetric

__all__ = ["CHRF"]

# sacrebleu's CHRF._PUNCTS (string.punctuation), for chrF++'s word splitting
_PUNCTS = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
_EPS = 1e-16  # sacrebleu's (chrF++.py's) smoothing value

_Ngrams = tuple[tuple[Counter, ...], tuple[int, ...]]  # per order: the n-gram counts and their total


def _split_punctuation(sent: str) -> list[str]:
    """chrF++'s words: sacrebleu's ``CHRF._remove_punctuation`` (after Popović's chrF++.py): whitespace split; a
    word longer than one character ending in a punctuation mark loses it as a separate word, else one starting
    with one does (so ``'(hi)'`` gives ``'(hi'``, ``')'``, as sacrebleu issue #124 notes)."""
    out: list[str] = []
    for w in sent.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in _PUNCTS:
            out += [w[:-1], w[-1]]
        elif w[0] in _PUNCTS:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


class CHRF(LexicalMetric):
    """chrF (Popović 2015) and chrF++ (Popović 2017, ``word_order=2``), exactly sacrebleu's ``CHRF``; ``score``
    is sacrebleu's value / 100 (0-1 scale). See the module docstring for the definition, statistics and options."""

    def __init__(self, char_order: int = 6, word_order: int = 0, beta: float = 2, lowercase: bool = False,
                 whitespace: bool = False, eps_smoothing: bool = False, tokenizer: str = "none") -> None:
        if tokenizer != "none":
            raise ValueError(f"chrF extracts its own character and word n-grams from the raw text (as sacrebleu); "
                             f"the kit's tokenizer does not apply: got tokenizer={tokenizer!r}, only 'none' is accepted")
        if int(char_order) < 0 or int(word_order) < 0 or int(char_order) + int(word_order) < 1:
            raise ValueError(f"chrF: char_order and word_order must be >= 0, one of them > 0; got {char_order}, "
                             f"{word_order}")
        if beta <= 0:
            raise ValueError(f"chrF: beta must be > 0, got {beta}")
        self.name = "chrF++" if int(word_order) == 2 else "chrF"
        super().__init__("none", lowercase)
        self.char_order, self.word_order = int(char_order), int(word_order)
        self.order = self.char_order + self.word_order
        self.beta = beta
        self.whitespace = bool(whitespace)
        self.eps_smoothing = bool(eps_smoothing)
        self.n_stats = 3 * self.order
        self._ref_cache: dict[str, _Ngrams] = {}

    # --- options and signature -----------------------------------------------------------------------------
    def _options(self) -> dict[str, Any]:
        """sacrebleu's signature fields (``nc``, ``nw``, ``space``, ``case``, ``eff``) plus ``beta``."""
        return {"nc": self.char_order, "nw": self.word_order, "beta": f"{self.beta:g}",
                "space": "yes" if self.whitespace else "no", "case": "lc" if self.lowercase else "mixed",
                "eff": "no" if self.eps_smoothing else "yes"}

    # --- n-grams and statistics ----------------------------------------------------------------------------
    def _ngrams(self, text: str) -> _Ngrams:
        """Per order (char orders, then word orders): the n-gram Counter and its total, of preprocessed text."""
        grams = extract_all_char_ngrams(text, self.char_order, self.whitespace)
        if self.word_order:
            words = _split_punctuation(text)
            grams += [extract_word_ngrams(words, n) for n in range(1, self.word_order + 1)]
        return tuple(grams), tuple(sum(c.values()) for c in grams)

    def _ref_ngrams(self, ref: str) -> _Ngrams:
        hit = self._ref_cache.get(ref)
        if hit is None:
            if len(self._ref_cache) > 100_000:
                self._ref_cache.clear()
            hit = self._ref_cache[ref] = self._ngrams(ref)
        return hit

    def _prep(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _row(self, hyp: _Ngrams, ref: _Ngrams) -> list[int]:
        """sacrebleu's ``_get_match_statistics`` over the orders: ``[hyp, ref, match]`` per order."""
        row: list[int] = []
        for hc, nh, rc, nr in zip(hyp[0], hyp[1], ref[0], ref[1]):
            small, big = (hc, rc) if len(hc) <= len(rc) else (rc, hc)  # the sum of minima is symmetric
            match = 0
            for g, c in small.items():
                d = big.get(g)
                if d is not None:
                    match += c if c < d else d
            row += [nh if nr else 0, nr, match]
        return row

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        """One row per segment: the statistics of the reference with the best sentence score (ties: the first)."""
        rows: list[list[int]] = []
        seg: list[int] = []
        for i, (h, rs) in enumerate(zip(corpus.hyps, corpus.refs)):
            hg = self._ngrams(self._prep(h))
            for k, r in enumerate(rs):
                if not isinstance(r, str):
                    raise TypeError(f"{self.name}: reference {k} of segment {i} is {type(r).__name__}, not str")
                if not r.strip():
                    raise ValueError(f"{self.name}: reference {k} of segment {i} is empty")
                rows.append(self._row(hg, self._ref_ngrams(self._prep(r))))
                seg.append(i)
        n = len(corpus)
        cand = np.asarray(rows, dtype=float).reshape(len(rows), self.n_stats)
        if len(rows) == n:  # one reference per segment
            return cand
        seg_a = np.asarray(seg)
        f = self._f100(cand)
        starts = np.flatnonzero(np.r_[True, seg_a[1:] != seg_a[:-1]])
        best = f == np.maximum.reduceat(f, starts)[seg_a]
        first = np.flatnonzero(best)[np.unique(seg_a[best], return_index=True)[1]]  # first best of each segment
        return cand[first]

    # --- scores --------------------------------------------------------------------------------------------
    def _averages(self, stats: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per row: per-order precisions and recalls (eps where undefined) and sacrebleu's effective-order average
        precision and recall; the sums run over the orders in sacrebleu's order (bit for bit its floats)."""
        nh, nr, nm = stats[:, 0::3], stats[:, 1::3], stats[:, 2::3]
        with np.errstate(invalid="ignore", divide="ignore"):
            prec = np.where(nh > 0, nm / np.where(nh > 0, nh, 1.0), _EPS)
            rec = np.where(nr > 0, nm / np.where(nr > 0, nr, 1.0), _EPS)
        both = (nh > 0) & (nr > 0)
        avg_p, avg_r = np.zeros(len(stats)), np.zeros(len(stats))
        for i in range(self.order):
            avg_p = avg_p + np.where(both[:, i], prec[:, i], 0.0)
            avg_r = avg_r + np.where(both[:, i], rec[:, i], 0.0)
        eff = both.sum(axis=1)
        avg_p = np.where(eff > 0, avg_p / np.maximum(eff, 1), 0.0)
        avg_r = np.where(eff > 0, avg_r / np.maximum(eff, 1), 0.0)
        return prec, rec, avg_p, avg_r

    def _f100(self, stats: np.ndarray) -> np.ndarray:
        """sacrebleu's ``_compute_f_score`` of every row (0-100), the same float operations in the same order."""
        stats = np.atleast_2d(stats)
        factor = self.beta ** 2
        prec, rec, avg_p, avg_r = self._averages(stats)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.eps_smoothing:
                score = np.zeros(len(stats))
                for i in range(self.order):
                    p, r = prec[:, i], rec[:, i]
                    denom = factor * p + r
                    score = score + np.where(denom > 0, (1 + factor) * p * r / np.where(denom > 0, denom, 1.0), _EPS)
                return 100 * score / self.order
            denom = factor * avg_p + avg_r
            f = (1 + factor) * avg_p * avg_r / np.where(avg_p + avg_r != 0, denom, 1.0)
            return np.where(avg_p + avg_r != 0, 100 * f, 0.0)

    def score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return self._f100(stats) / 100.0

    def _corpus_detail(self, row: np.ndarray) -> tuple[float, dict]:
        row = np.asarray(row, dtype=float)
        prec, rec, avg_p, avg_r = self._averages(row[None, :])
        return float(self.score_from_stats(row[None, :])[0]), {
            "precision": float(avg_p[0]), "recall": float(avg_r[0]),
            "precisions": [float(x) if n > 0 else 0.0 for x, n in zip(prec[0], row[0::3])],
            "recalls": [float(x) if n > 0 else 0.0 for x, n in zip(rec[0], row[1::3])],
            "hyp_counts": [int(x) for x in row[0::3]], "ref_counts": [int(x) for x in row[1::3]],
            "matches": [int(x) for x in row[2::3]],
            "char_order": self.char_order, "word_order": self.word_order, "beta": self.beta,
        }
