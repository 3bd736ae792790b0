"""Syntactic hybridization of references (Wang, Zhao, Yang & Li: "References Extension for the Automatic
Evaluation of MT by Syntactic Hybridization").

**Syntactic equivalents (Section 2).** For two reference trees ``T1``, ``T2`` of the same source sentence the
equivalent pairs ``<N1, N2, S1, S2>`` are found by a synchronous top-down traversal:

- the two roots are a pair (whatever their labels);
- if ``<N1, N2>`` is a pair and the children of ``N1`` and ``N2`` carry exactly the same sequence of labels, the
  children are paired position by position, recursively.

Nodes are the non-leaf nodes of the tree, preterminals included; words are not nodes, so a preterminal pair stops
the descent. This is done for every pair of references of a segment (:func:`equivalent_pairs`).

**Hybridization (Section 3).** ``Equ(nt)`` is the paper's recursion::

    Equ(nt) = {Seg(nt)} ∪ {Seg(nt') : <nt, nt'> is an equivalent pair}
                         ∪ Equ(child_1) × Equ(child_2) × ... × Equ(child_m)

where ``×`` concatenates sub-segments, and the extended reference set is ``R' = ∪_i Equ(root_i)`` with duplicates
removed (formula 1). (The paper computes the product under "if nt is in an equivalent pair"; a node outside every
pair has no paired descendant, so its product is ``{Seg(nt)}`` either way.)

**Enumeration and the cap.** ``|R'|`` grows as a product over the swap points, so :func:`hybridize_segment` never
builds the sets. Each element of ``Equ(root_i)`` is a *derivation*: a set of non-overlapping nodes of tree ``i``,
each replaced by the segment of one of its equivalents. Derivations are enumerated lazily in a canonical order:

1. by the number of substitutions ``k = 0, 1, 2, ...`` (``k = 0`` are the original references, so they come first
   and are always kept);
2. within one ``k``, round-robin over the references ``i = 0, 1, ...`` (one derivation of each root in turn);
3. within one root, top-down: a node's own equivalents before substitutions inside its children, and children left
   to right (the leftmost child takes the largest share of the ``k`` substitutions first).

Duplicated token sequences are removed (the first derivation is kept), and the enumeration stops after
``max_refs`` distinct references. With ``max_refs=None`` every derivation is enumerated, which is exactly the
paper's ``R'``. The selection thus keeps the hybrids closest to a human reference (fewest swapped equivalents).
Two kinds of derivations that can only repeat a string are pruned before counting (the result without a cap is
unchanged): an equivalent whose words equal the node's own words, and a whole-node swap ``nt -> nt'`` when the two
nodes have the same child labels (their children are then paired, and the product over the children yields
``Seg(nt')`` anyway). :attr:`HybridSet.capped` tells whether the cap removed anything.

**Text.** Hybrids are built from the parser's PTB tokens, but the lexical metrics tokenize plain text
themselves (sacrebleu 13a). When the raw reference texts are given (``texts=``), the originals keep their raw text
exactly, and every token is located in its raw text (:func:`align_leaves`), so a hybrid is written with the
references' own characters (curly quotes, ``don't``, ``(``) and spacing; at a seam between pieces of two
references the host reference's spacing at that boundary is used. Otherwise (no text, or a reference that does
not align: 2 of the 3,058 WMT21/TED references, at "3½" and "’”") :func:`detokenize` writes the tokens: PTB
escapes are unescaped (``-LRB-`` -> ``(``) and nltk's Treebank detokenizer rejoins clitics (``do n't`` ->
``don't``) and punctuation, quotes becoming ``"``.

**Chapter code** (notebook 06) is in :mod:`syneval_nb.studies.hybridization`: the extended sets of a (system,
segment) table (``hybridize_frame``, ``reference_trees``), the cap and detokenization reports, Table 5 / Figures
2-5 (``reference_statistics``, ``node_lengths``, ``length_distribution``, ``table5``) and the evaluation with
extended references (scores per reference set, gain tables, verdicts).

**Trees.** Every :class:`Hybrid` carries its tree: the tree of the root it was derived from with the substituted
subtrees of the other references. Unchanged subtrees are shared with the input trees (no copies); treat the
trees as read-only.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from nltk import Tree
from nltk.tokenize.treebank import TreebankWordDetokenizer
from tqdm.auto import tqdm
from syneval_nb.trees.encoding import Interner, encode
from syneval_nb.trees.ptb import spans, unescape_word


__all__ = ["Hybrid", "equivalent_pairs", "equivalent_nodes", "hybridize", "hybridize_corpus"]

DEFAULT_MAX_REFS = 64
"""Default cap on references per segment (originals included)."""

WELL_FORMED = (None, "seams")
"""The well-formedness checks of :func:`hybridize_segment` (``well_formed=``). ``None``: the paper (every
derivation is a reference). ``"seams"``: a hybrid is kept only if every word pair that crosses a seam between two
pieces occurs in one of the segment's original references (:func:`seams_attested`): no "It fly", "I are",
"both of them're". (A swapped piece never opens or ends a hybrid unless it opens or ends its own reference too:
pairs descend from the two roots position by position.)"""

Subst = tuple[int, int, int]  # (node of the root's tree, other reference j, node of tree j), preorder indices


@dataclass(frozen=True)
class Hybrid:
    """One reference of the extended set.

    ``tokens``: PTB tokens; ``text``: the raw text for an original when given, else :func:`detokenize` of the
    tokens; ``tree``: its constituency tree (read-only, shares subtrees with the inputs); ``is_original``;
    ``source``: index of the reference whose root it derives from; ``swaps``: the substitutions
    ``(node, j, node_j)`` (preorder node indices of tree ``source`` and tree ``j``), empty for an original;
    ``text_from``: ``"raw"`` (an original's given text), ``"aligned"`` (the references' own characters, see
    :func:`align_leaves`) or ``"detokenized"`` (:func:`detokenize`, when no raw text is given or aligned).
    ``seams``: the token pairs across the hybrid's seams (see :data:`WELL_FORMED`), empty for an original.
    ``tree`` is ``None`` only for a reference kept without a parse by :func:`hybridize_corpus`.
    """

    tokens: tuple[str, ...]
    text: str
    tree: Tree | None = field(repr=False, compare=False)
    is_original: bool
    source: int
    swaps: tuple[Subst, ...] = ()
    text_from: str = "detokenized"
    seams: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def n_swaps(self) -> int:
        """Number of substituted equivalents (0 for an original)."""
        return len(self.swaps)


@dataclass(frozen=True)
class HybridSet:
    """The extended reference set of one segment and what it took to make it.

    ``n_derivations``: size of the (pruned) derivation space, duplicates included – what the enumeration would
    visit without a cap; ``capped``: the cap removed at least one distinct reference; ``n_rejected``: distinct
    hybrids the ``well_formed`` check removed (0 without a check) before the cap was reached.
    """

    hybrids: list[Hybrid]
    n_derivations: int
    capped: bool
    max_refs: int | None
    n_rejected: int = 0
    well_formed: str | None = None

    def __len__(self) -> int:
        return len(self.hybrids)

    @property
    def texts(self) -> list[str]:
        return [h.text for h in self.hybrids]

    @property
    def trees(self) -> list[Tree]:
        return [h.tree for h in self.hybrids]

    @property
    def originals(self) -> list[Hybrid]:
        return [h for h in self.hybrids if h.is_original]

    @property
    def ptbs(self) -> list[str | None]:
        """One-line bracketed trees (``None`` for a reference without a tree), e.g. to store them; the
        functions of :mod:`syneval_nb.metrics.syntactic` also take :attr:`trees` directly."""
        return [None if h.tree is None else h.tree.pformat(margin=1 << 30) for h in self.hybrids]


@dataclass(frozen=True)
class EquivalentPair:
    """``<N1, N2, S1, S2>`` of the paper: node positions (nltk tree positions) and the covered words."""

    label1: str
    label2: str
    pos1: tuple[int, ...]
    pos2: tuple[int, ...]
    seg1: tuple[str, ...]
    seg2: tuple[str, ...]


# ------------------------------------------------------------------------------------- indexing


class _Ref:
    """One reference tree indexed in preorder (via :func:`trees.encoding.encode` and :func:`trees.spans`)."""

    __slots__ = ("tree", "enc", "spans", "words", "size", "_kid_labels")

    def __init__(self, tree: Tree, interner: Interner) -> None:
        if not isinstance(tree, Tree):
            raise TypeError(f"expected an nltk.Tree, got {type(tree).__name__}")
        self.tree = tree
        self.enc = encode(tree, interner)
        self.spans = [(s, e) for _, s, e in spans(tree)]
        self.words = tuple(tree.leaves())
        if not self.words:
            raise ValueError("a reference tree without words cannot be hybridized")
        n = len(self.enc)
        size = [1] * n
        for x in self.enc.postorder():
            size[x] = 1 + sum(size[c] for c in self.enc.children[x])
        self.size = size
        self._kid_labels: dict[int, tuple[int, ...]] = {}

    def kid_labels(self, x: int) -> tuple[int, ...]:
        got = self._kid_labels.get(x)
        if got is None:
            got = self._kid_labels[x] = tuple(self.enc.labels[c] for c in self.enc.children[x])
        return got

    def seg(self, x: int) -> tuple[str, ...]:
        s, e = self.spans[x]
        return self.words[s:e]


def _pairs(a: _Ref, b: _Ref) -> list[tuple[int, int]]:
    """Equivalent node pairs of two indexed trees, top-down (breadth-first), roots first (Section 2)."""
    out = [(0, 0)]
    k = 0
    while k < len(out):
        x, y = out[k]
        k += 1
        kx = a.enc.children[x]
        if kx and a.kid_labels(x) == b.kid_labels(y):
            out.extend(zip(kx, b.enc.children[y]))
    return out


def _index(ref_trees: Sequence[Tree]) -> tuple[list[_Ref], list[list[list[tuple[int, int]]]]]:
    """Index the trees and collect, for every node of every reference, its equivalents ``(j, y)`` (j ascending)."""
    interner = Interner()
    refs = []
    for i, t in enumerate(ref_trees):
        try:
            refs.append(_Ref(t, interner))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"reference {i}: {exc}") from None
    equivs: list[list[list[tuple[int, int]]]] = [[[] for _ in range(len(r.enc))] for r in refs]
    for i in range(len(refs)):
        for j in range(i + 1, len(refs)):
            for x, y in _pairs(refs[i], refs[j]):
                equivs[i][x].append((j, y))
                equivs[j][y].append((i, x))
    for per_ref in equivs:
        for lst in per_ref:
            lst.sort()
    return refs, equivs


def equivalent_pairs(t1: Tree, t2: Tree) -> list[EquivalentPair]:
    """All syntactic equivalent pairs of two reference trees, top-down (Section 2 of the paper)."""
    interner = Interner()
    a, b = _Ref(t1, interner), _Ref(t2, interner)
    pos_a, pos_b = _positions(t1), _positions(t2)
    return [EquivalentPair(a.enc.nodes[x].label(), b.enc.nodes[y].label(), pos_a[x], pos_b[y], a.seg(x), b.seg(y))
            for x, y in _pairs(a, b)]


def _positions(t: Tree) -> list[tuple[int, ...]]:
    """nltk tree positions of the nodes (not the words) in preorder."""
    return [p for p in t.treepositions() if isinstance(t[p], Tree)]


def equivalent_nodes(ref_trees: Sequence[Tree]) -> list[list[bool]]:
    """For each reference, a preorder flag per node: is the node in an equivalent pair with another reference?"""
    _, equivs = _index(ref_trees)
    return [[bool(e) for e in per_ref] for per_ref in equivs]


# ---------------------------------------------------------------------------------- enumeration


class _Space:
    """The derivation space of one segment: ``Equ(root_i)`` for every reference ``i``, counted and enumerated."""

    def __init__(self, refs: list[_Ref], equivs: list[list[list[tuple[int, int]]]]) -> None:
        self.refs = refs
        self.alts = [self._alternatives(i, equivs[i]) for i in range(len(refs))]
        self.poly: list[list[list[int]]] = []
        self.varkids: list[list[tuple[int, ...]]] = []
        for i in range(len(refs)):
            p, v = self._count(i)
            self.poly.append(p)
            self.varkids.append(v)

    def _alternatives(self, i: int, equiv_i: list[list[tuple[int, int]]]) -> list[tuple[tuple[int, int], ...]]:
        """Whole-node swaps that can give a new string (see the module docstring for the two prunings)."""
        r = self.refs[i]
        out = []
        for x, eq in enumerate(equiv_i):
            if not eq:
                out.append(())
                continue
            own = r.seg(x)
            seen = {own}
            keep = []
            for j, y in eq:
                o = self.refs[j]
                if r.enc.children[x] and r.kid_labels(x) == o.kid_labels(y):
                    continue  # children are paired: the product over the children reproduces Seg(y)
                s = o.seg(y)
                if s not in seen:
                    seen.add(s)
                    keep.append((j, y))
            out.append(tuple(keep))
        return out

    def _count(self, i: int) -> tuple[list[list[int]], list[tuple[int, ...]]]:
        """Derivations of every node of tree ``i`` by number of substitutions (a polynomial in the cost)."""
        enc = self.refs[i].enc
        n = len(enc)
        poly: list[list[int]] = [[1]] * n
        varkids: list[tuple[int, ...]] = [()] * n
        for x in enc.postorder():
            kids = tuple(c for c in enc.children[x] if len(poly[c]) > 1)
            prod = [1]
            for c in kids:
                prod = _convolve(prod, poly[c])
            p = [1, len(self.alts[i][x])] if self.alts[i][x] else [1]
            for k in range(1, len(prod)):  # prod[0] == 1 is the all-unchanged derivation, i.e. Seg(x) again
                if k < len(p):
                    p[k] += prod[k]
                else:
                    p.append(prod[k])
            poly[x] = p
            varkids[x] = kids
        return poly, varkids

    def n_derivations(self) -> int:
        return sum(sum(p[0]) for p in self.poly)

    def derivations(self, i: int, x: int, k: int) -> Iterator[tuple[Subst, ...]]:
        """Derivations of node ``x`` of tree ``i`` with exactly ``k`` substitutions, in the canonical order."""
        if k == 0:
            yield ()
            return
        if k == 1:
            for j, y in self.alts[i][x]:
                yield ((x, j, y),)
        kids = self.varkids[i][x]
        if not kids:
            return
        poly = self.poly[i]
        caps = [len(poly[c]) - 1 for c in kids]
        for comp in _compositions(k, caps, [poly[c] for c in kids]):
            yield from self._product(i, [(c, a) for c, a in zip(kids, comp) if a])

    def _product(self, i: int, parts: list[tuple[int, int]]) -> Iterator[tuple[Subst, ...]]:
        if not parts:
            yield ()
            return
        (c, a), rest = parts[0], parts[1:]
        for d in self.derivations(i, c, a):
            for r in self._product(i, rest):
                yield d + r

    def pieces(self, i: int, subs: tuple[Subst, ...]) -> list[tuple[int, int, int]]:
        """The pieces of a derivation in order: ``(reference, first leaf, end leaf)``."""
        r = self.refs[i]
        out: list[tuple[int, int, int]] = []
        pos = 0
        for x, j, y in subs:
            s, e = r.spans[x]
            if s > pos:
                out.append((i, pos, s))
            out.append((j, *self.refs[j].spans[y]))
            pos = e
        if pos < len(r.words):
            out.append((i, pos, len(r.words)))
        return out

    def seams(self, i: int, subs: tuple[Subst, ...]) -> tuple[tuple[str, str], ...]:
        """Token pairs across the seams of a derivation: the last token of each piece and the first of the next."""
        pieces = self.pieces(i, subs)
        return tuple((self.refs[j].words[b - 1], self.refs[k].words[c])
                     for (j, _, b), (k, c, _) in zip(pieces, pieces[1:]))

    def tokens(self, i: int, subs: tuple[Subst, ...]) -> tuple[str, ...]:
        """The token sequence of root ``i`` after the substitutions."""
        r = self.refs[i]
        if not subs:
            return r.words
        toks: list[str] = []
        pos = 0
        for x, j, y in subs:
            s, e = r.spans[x]
            toks.extend(r.words[pos:s])
            toks.extend(self.refs[j].seg(y))
            pos = e
        toks.extend(r.words[pos:])
        return tuple(toks)

    def tree(self, i: int, subs: tuple[Subst, ...]) -> Tree:
        """The tree of root ``i`` after the substitutions (unchanged subtrees are shared, not copied)."""
        r = self.refs[i]
        if not subs:
            return r.tree
        where = {x: (j, y) for x, j, y in subs}
        keys = sorted(where)

        def touched(x: int) -> bool:
            k = bisect.bisect_left(keys, x)
            return k < len(keys) and keys[k] < x + r.size[x]

        def build(x: int) -> Tree:
            if x in where:
                j, y = where[x]
                return self.refs[j].enc.nodes[y]
            node = r.enc.nodes[x]
            if not touched(x):
                return node
            return Tree(node.label(), [build(c) for c in r.enc.children[x]])

        return build(0)


def _convolve(p: list[int], q: list[int]) -> list[int]:
    out = [0] * (len(p) + len(q) - 1)
    for a, pa in enumerate(p):
        if pa:
            for b, qb in enumerate(q):
                out[a + b] += pa * qb
    return out


def _compositions(k: int, caps: list[int], polys: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """Ways to share ``k`` substitutions among children (leftmost child takes the most first), non-empty only."""
    n = len(caps)
    room = [0] * (n + 1)
    for t in range(n - 1, -1, -1):
        room[t] = room[t + 1] + caps[t]

    def rec(t: int, left: int) -> Iterator[tuple[int, ...]]:
        if t == n:
            if left == 0:
                yield ()
            return
        for a in range(min(left, caps[t]), -1, -1):
            if left - a > room[t + 1]:
                break
            if polys[t][a]:
                for rest in rec(t + 1, left - a):
                    yield (a,) + rest

    return rec(0, k)


def _round_robin(gens: list[Iterator]) -> Iterator[tuple[int, object]]:
    """Interleave iterators: one item of each in turn, as ``(iterator index, item)``."""
    live = list(enumerate(gens))
    while live:
        nxt = []
        for idx, g in live:
            for item in g:
                yield idx, item
                nxt.append((idx, g))
                break
        live = nxt


# --------------------------------------------------------------------------------- surface text

# Characters the Stanford PTB tokenizer normalises (curly quotes -> `` '' ' ; no-break space inside numbers):
# applied to both the raw text and the unescaped token, one character for one, so raw offsets are kept.
_SURFACE_MAP = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"',
                              "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "`": "'", "\u00a0": " "})
_SURFACE_ALTERNATIVES = {"--": ("\u2014", "\u2013", "\u2212"), "...": ("\u2026", ". . .")}


def align_leaves(words: Sequence[str], raw: str) -> list[tuple[int, int]] | None:
    """Character span ``(start, end)`` of every PTB token in the raw text it was tokenized from, or ``None`` when
    a token cannot be found in order. Handles the tokenizer's normalisations: PTB escapes, curly quotes written as
    ```` `` ```` / ``''`` / ``'``, dashes as ``--``, the ellipsis as ``...``, and the extra ``.`` added after a
    sentence-final abbreviation ("U.S." -> ``U.S. .``, an empty span)."""
    norm = raw.translate(_SURFACE_MAP)
    out: list[tuple[int, int]] = []
    pos, n = 0, len(raw)
    for w in words:
        while pos < n and raw[pos].isspace():
            pos += 1
        tok = unescape_word(w).translate(_SURFACE_MAP)
        for cand in (tok,) + _SURFACE_ALTERNATIVES.get(tok, ()):
            if norm.startswith(cand, pos):
                out.append((pos, pos + len(cand)))
                pos += len(cand)
                break
        else:
            if tok == "." and out and norm[out[-1][1] - 1] == ".":
                out.append((out[-1][1], out[-1][1]))
                continue
            return None
    return out


class _Surface:
    """Raw texts of the references with their token spans: hybrids are written with the references' own
    characters and spacing; before each piece, the spacing that precedes its first token in its own reference
    (so "you" + "are" keeps its space and "you" + "'re" none), or the host's when the piece starts its reference."""

    def __init__(self, refs: list[_Ref], texts: Sequence[str] | None) -> None:
        self.texts = texts
        self.spans = [align_leaves(r.words, t) for r, t in zip(refs, texts)] if texts is not None else None

    def text(self, space: "_Space", i: int, subs: tuple[Subst, ...]) -> str | None:
        """The surface text of a derivation, ``None`` when one of the references involved is not aligned."""
        if self.spans is None:
            return None
        host = self.spans[i]
        if host is None or any(self.spans[j] is None for _, j, _ in subs):
            return None
        # pieces: (reference, first leaf, end leaf), plus the host boundary that precedes each piece
        pieces: list[tuple[int, int, int, int]] = []
        pos = 0
        r = space.refs[i]
        for x, j, y in subs:
            s, e = r.spans[x]
            if s > pos:
                pieces.append((i, pos, s, pos))
            ys, ye = space.refs[j].spans[y]
            pieces.append((j, ys, ye, s))
            pos = e
        if pos < len(r.words):
            pieces.append((i, pos, len(r.words), pos))
        out = []
        for k, (j, a, b, boundary) in enumerate(pieces):
            sp = self.spans[j]
            if k:  # the spacing before the piece's first token in its own reference ("you" + "'re", "you" + " are")
                if a:
                    out.append(self.texts[j][sp[a - 1][1]:sp[a][0]])
                else:
                    out.append(self.texts[i][host[boundary - 1][1]:host[boundary][0]] if boundary else " ")
            out.append(self.texts[j][sp[a][0]:sp[b - 1][1]])
        return "".join(out)


# -------------------------------------------------------------------------------------- public


@lru_cache(maxsize=1)
def _detokenizer() -> TreebankWordDetokenizer:
    return TreebankWordDetokenizer()


def detokenize(tokens: Sequence[str]) -> str:
    """Plain text from PTB tokens: unescape brackets, rejoin clitics and punctuation (nltk Treebank detokenizer).

    Quotes: ```` `` ```` and ``''`` are left to the detokenizer, which attaches them to the quoted words and
    writes ``"``. Bracket escapes (``-LRB-`` ...) are mapped back with :func:`trees.unescape_word` first.
    """
    toks = [t if t in ("``", "''") else unescape_word(t) for t in tokens]
    return _detokenizer().detokenize(toks)


def _bigrams(originals: Sequence[Sequence[str]]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for toks in originals:
        out.update(zip(toks, toks[1:]))
    return out


def seams_attested(hybrid: Hybrid, originals: Sequence[Sequence[str]]) -> bool:
    """The ``"seams"`` check of :data:`WELL_FORMED`: every token pair across the hybrid's seams
    (:attr:`Hybrid.seams`) occurs in one of ``originals`` (the token sequences of the segment's original
    references). True for an original."""
    return set(hybrid.seams) <= _bigrams(originals)


def hybridize_segment(ref_trees: Sequence[Tree], *, max_refs: int | None = DEFAULT_MAX_REFS,
                      texts: Sequence[str] | None = None, well_formed: str | None = None) -> HybridSet:
    """The extended reference set ``R'`` of one segment (formula 1), capped at ``max_refs`` (see module docstring).

    ``texts``: the raw texts of the references (same order); originals then carry their raw text and hybrids are
    written with the references' own characters (:func:`align_leaves`), falling back to :func:`detokenize` when a
    reference involved does not align (see :attr:`Hybrid.text_from`). Originals with the same tokens as an earlier
    original are dropped (``R'`` is a set). ``well_formed``: a check of :data:`WELL_FORMED` (default ``None``, the
    paper: none); a hybrid that fails it is not kept and does not count towards ``max_refs``.
    """
    if well_formed not in WELL_FORMED:
        raise ValueError(f"well_formed must be one of {WELL_FORMED}, got {well_formed!r}")
    if len(ref_trees) == 0:
        raise ValueError("no reference trees given")
    if texts is not None and len(texts) != len(ref_trees):
        raise ValueError(f"{len(texts)} texts for {len(ref_trees)} reference trees")
    if max_refs is not None and max_refs < len(ref_trees):
        raise ValueError(f"max_refs={max_refs} is smaller than the number of references ({len(ref_trees)})")
    refs, equivs = _index(ref_trees)
    space = _Space(refs, equivs)
    surface = _Surface(refs, texts)
    out: list[Hybrid] = []
    seen: set[tuple[str, ...]] = set()
    rejected: set[tuple[str, ...]] = set()
    attested = _bigrams([r.words for r in refs]) if well_formed == "seams" else set()
    capped = False
    max_k = max(len(space.poly[i][0]) for i in range(len(refs))) - 1
    for k in range(max_k + 1):
        gens = [space.derivations(i, 0, k) if k < len(space.poly[i][0]) else iter(()) for i in range(len(refs))]
        for i, subs in _round_robin(gens):
            toks = space.tokens(i, subs)
            if toks in seen:
                continue
            seams = space.seams(i, subs) if k else ()
            if well_formed == "seams" and not set(seams) <= attested:
                rejected.add(toks)
                continue
            if max_refs is not None and len(out) >= max_refs:
                capped = True
                break
            seen.add(toks)
            if k == 0 and texts is not None:
                text, how = texts[i], "raw"
            else:
                text, how = surface.text(space, i, subs), "aligned"
                if text is None:
                    text, how = detokenize(toks), "detokenized"
            out.append(Hybrid(toks, text, space.tree(i, subs), k == 0, i, subs, how, seams))
        if capped:
            break
    return HybridSet(out, space.n_derivations(), capped, max_refs, len(rejected - seen), well_formed)


def hybridize(ref_trees: Sequence[Tree], *, max_refs: int | None = DEFAULT_MAX_REFS,
              texts: Sequence[str] | None = None, well_formed: str | None = None) -> list[Hybrid]:
    """The extended reference set of one segment, originals included (see :func:`hybridize_segment`)."""
    return hybridize_segment(ref_trees, max_refs=max_refs, texts=texts, well_formed=well_formed).hybrids


def hybridize_corpus(segments: Sequence[Sequence[Tree | None]], *, max_refs: int | None = DEFAULT_MAX_REFS,
                     texts: Sequence[Sequence[str]] | None = None, progress: bool = True,
                     well_formed: str | None = None) -> list[HybridSet]:
    """:func:`hybridize_segment` for every segment (``segments[s]`` = the reference trees of segment ``s``).

    A reference without a tree (``None``, a failed parse) takes no part in the hybridization; it stays in the
    set as an original with its raw text (``texts`` is then required), ``tree=None`` and the white-space split of
    the text as ``tokens`` (there are no PTB tokens).
    """
    if texts is not None and len(texts) != len(segments):
        raise ValueError(f"texts has {len(texts)} segments, the trees {len(segments)}")
    if well_formed not in WELL_FORMED:
        raise ValueError(f"well_formed must be one of {WELL_FORMED}, got {well_formed!r}")
    out = []
    for s, trees in enumerate(tqdm(segments, desc="hybridizing", disable=not progress)):
        seg_texts = None if texts is None else list(texts[s])
        if seg_texts is not None and len(seg_texts) != len(trees):
            raise ValueError(f"segment {s}: {len(seg_texts)} texts for {len(trees)} trees")
        keep = [i for i, t in enumerate(trees) if t is not None]
        missing = [i for i, t in enumerate(trees) if t is None]
        if missing and seg_texts is None:
            raise ValueError(f"segment {s}: references {missing} have no tree; pass texts= to keep them")
        try:
            if keep:
                hs = hybridize_segment([trees[i] for i in keep], max_refs=max_refs,
                                       texts=None if seg_texts is None else [seg_texts[i] for i in keep],
                                       well_formed=well_formed)
                hybrids = [Hybrid(h.tokens, h.text, h.tree, h.is_original, keep[h.source],
                                  tuple((x, keep[j], y) for x, j, y in h.swaps), h.text_from, h.seams)
                           for h in hs.hybrids]
            else:
                hs = HybridSet([], 0, False, max_refs, 0, well_formed)
                hybrids = []
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"segment {s}: {exc}") from None
        for i in missing:
            hybrids.insert(sum(1 for h in hybrids if h.is_original and h.source < i),
                           Hybrid(tuple(seg_texts[i].split()), seg_texts[i], None, True, i, (), "raw"))
        out.append(HybridSet(hybrids, hs.n_derivations + len(missing), hs.capped, max_refs, hs.n_rejected,
                             well_formed))
    return out
