"""The kit's one sentence splitter (issue 33): a segment (one input line) into its sentences, before parsing.

Why split: the Stanford PCFG is cubic in the sentence length and has a length limit, so a line holding two
sentences (119 + 50 tokens) was parsed as one 169-token "sentence", slowly, or not at all (over ``max_length``).
In sentence mode (:func:`syneval_nb.parsers.frontend.parse_strings` with ``split="sentences"``) every sentence of
a line is parsed on its own (cached by its exact text) and the line's tree joins them under one ``ROOT``
(:func:`join_trees`).

The splitter is rule-based, deterministic and offline (no model, no download), and **conservative**: a wrong split
changes a tree, a missed split only costs parsing time, so it splits only where a sentence clearly ends. Its name,
:data:`SPLITTER`, is part of the parse source of sentence mode (and so of the metrics' signatures); any change of
the rules must change the name. A boundary is after ``.``, ``!``, ``?``, ``...`` or ``…`` (a run of them), with
any closing quotes or brackets that follow, when all of these hold:

- white space follows, and then (after any opening quotes or brackets) an upper-case letter
  (``str.isupper``: "Ä", "É" too). A lower-case word or a digit never starts a sentence here
  (``"Why?" he asked``, ``No. 5``, ``Jan. 5``, ``p. 12``, ``3.5``);
- a single period does not end an abbreviation: the word before it is not a single letter (an initial:
  ``J. K. Rowling``), does not hold another period (``U.S.``, ``a.m.``, ``e.g.``, ``Ph.D.``), and is not one of
  the titles of :data:`ABBREVIATIONS` (``Mr.``, ``Dr.``, ``St.``, ``vs.``, ...; compared lower-cased);
- the boundary is outside brackets (``( [ {`` opened and not closed) and outside quotes (an odd number of ``"``
  before it, or an open curly ``“``);
- the sentence before it holds a letter (so ``1. Introduction`` and a lone ``...`` stay with their neighbour).

So ``He lives in the U.S. He likes it.`` stays one sentence (a missed split, on purpose), while ``He said "Go."
Then he left.`` is two. A line without a boundary is returned as it is (not stripped): its one sentence is the
line, so its parse and cache entry are exactly those of line mode. Sentences of a split line are the line's
substrings between boundaries, stripped of white space.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["split_sentences"]

SPLITTER = "syneval-rules-1"
"""Name (and version) of the splitting rules; part of sentence mode's parse source."""

SPLITS = ("sentences", "lines")
"""The two parse modes: ``"sentences"`` (every sentence of a line parsed on its own, the trees joined) and
``"lines"`` (each line parsed as one sentence, the kit's only mode before issue 33)."""

ABBREVIATIONS: frozenset[str] = frozenset({
    # titles and ranks before a (capitalised) name
    "mr", "mrs", "ms", "messrs", "mmes", "mme", "mlle", "dr", "drs", "prof", "sr", "jr", "st", "mt", "ft",
    "gen", "col", "lt", "maj", "capt", "cmdr", "sgt", "cpl", "adm", "gov", "sen", "rep", "rev", "hon", "pres",
    "supt", "insp", "det", "fr",
    # before a name or a title
    "vs", "cf", "al",
})
"""Words that a period after them does not end a sentence (lower case, without the period). Words whose period
is followed by a number (``No. 5``, ``Jan. 5``, ``Fig. 3``) need no entry: a digit never starts a sentence."""

_END = re.compile(r"(?:[.!?\u2026]+)([\"'\u201d\u2019\u00bb)\]}]*)(?=\s)")
_OPENERS = "\"'\u201c\u2018\u00ab([{"
_WORD = re.compile(r"\S*$")


def _starts_sentence(text: str, k: int) -> bool:
    """Whether, from position ``k`` (white space), the next word starts a sentence: openers, then upper case."""
    n = len(text)
    while k < n and text[k].isspace():
        k += 1
    while k < n and text[k] in _OPENERS:
        k += 1
    return k < n and text[k].isupper()


def _abbreviation(text: str, mark_start: int) -> bool:
    """Whether the single period at ``mark_start`` ends an abbreviation (see the module docstring)."""
    word = _WORD.search(text, 0, mark_start).group().lstrip(_OPENERS)
    if not word:
        return False
    if len(word) == 1 and word.isalpha():
        return True
    return "." in word or word.lower() in ABBREVIATIONS


def _inside(text: str, end: int) -> bool:
    """Whether position ``end`` is inside brackets or quotes (see the module docstring)."""
    head = text[:end]
    depth = sum(head.count(c) for c in "([{") - sum(head.count(c) for c in ")]}")
    return depth > 0 or head.count('"') % 2 == 1 or head.count("\u201c") > head.count("\u201d")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` by the kit's rules (module docstring). A text without a boundary gives
    ``[text]`` unchanged; an empty text gives ``[text]`` too.

    >>> split_sentences("Mr. Smith went to Washington. He arrived at 5 p.m. on Monday.")
    ['Mr. Smith went to Washington.', 'He arrived at 5 p.m. on Monday.']
    >>> split_sentences('He said "Go." Then he left.')
    ['He said "Go."', 'Then he left.']
    >>> split_sentences("It rose 3.5 percent in the U.S. The rest fell.")
    ['It rose 3.5 percent in the U.S. The rest fell.']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    cuts = []
    for m in _END.finditer(text):
        end = m.end()
        mark = text[m.start():m.end() - len(m.group(1))]
        if not _starts_sentence(text, end):
            continue
        if mark == "." and _abbreviation(text, m.start()):
            continue
        if _inside(text, end):
            continue
        cuts.append(end)
    bounds = [0] + cuts + [len(text)]
    j = 1
    while j < len(bounds) - 1:  # a piece without a letter stays with its neighbour: drop the cut
        if _has_letter(text[bounds[j - 1]:bounds[j]]) and _has_letter(text[bounds[j]:bounds[j + 1]]):
            j += 1
        else:
            del bounds[j]
            j = max(1, j - 1)
    if len(bounds) == 2:
        return [text]
    return [text[a:b].strip() for a, b in zip(bounds, bounds[1:])]


def _has_letter(piece: str) -> bool:
    return any(ch.isalpha() for ch in piece)


def join_trees(trees: Sequence[str]) -> str:
    """One line's tree from its sentences' one-line Stanford trees (each ``(ROOT x)``): one tree is returned as it
    is (line mode's tree); several give ``(ROOT x1 x2 ...)``, the sentences' top constituents as the children of
    one ``ROOT``. :func:`syneval_nb.trees.ptb.read_ptb` keeps that ``ROOT`` (a wrapper with several children), its
    subtrees are those of the sentences plus the ones rooted at ``ROOT``, and its head is the first sentence's
    (the ``ROOT`` row of :data:`syneval_nb.trees.heads.HEAD_RULES`)."""
    if len(trees) == 1:
        return trees[0]
    inner = []
    for t in trees:
        t = t.strip()
        if not (t.startswith("(ROOT ") and t.endswith(")")):
            raise ValueError(f"not a one-line Stanford tree (ROOT ...): {t[:60]!r}")
        inner.append(t[len("(ROOT "):-1].strip())
    return "(ROOT " + " ".join(inner) + ")"
