"""Collins (1999) head rules and the dependency trees derived from them (Liu & Gildea 2005, section 2.1).

Liu & Gildea derive their dependency trees "from the constituent trees by applying the deterministic headword
extraction rules used by the parser of Collins (1999)": every constituent gets a head child, the head word of a
constituent is the head word of its head child, and the head word of every other child depends on it.
:func:`to_dependencies` does this; :func:`headword_chains` extracts the chains of their Figure 3 from the result
(for "I have a red pen" the 2-word chains are ``have I``, ``have pen``, ``pen a``, ``pen red``).

The head table
--------------
:data:`HEAD_RULES` is the table of Collins (1999, thesis Appendix A, pp. 236-238), row by row as Collins
distributes it with his parser (the "modified version of Magerman's head table used in my experiments"), checked
against two public implementations: Stanford CoreNLP ``edu/stanford/nlp/trees/CollinsHeadFinder.java``
(stanfordnlp/CoreNLP) and the re-implementation of the thesis rules in L. Kong's ``RuleChecker.java``. For a
parent with direction ``left`` the priority list is walked category by category and, for each category, the
children are scanned left to right; the first match is the head. ``right`` scans right to left. If no category
matches, the head is the first child in the search direction (leftmost for ``left``, rightmost for ``right``).

NPs use the special rule of the thesis (:data:`NP_RULES`), where each step scans children by position:
the rightmost child among NN NNP NNPS NNS NX POS JJR; else the leftmost NP; else the rightmost among $ ADJP PRN;
else the rightmost CD; else the rightmost among JJ JJS RB QP; else the last word. (The thesis starts with "if the
last word is tagged POS, return it", which the first step already does, since POS is in its list.)

Coordination (thesis Appendix A): if the chosen head ``Y_h`` of ``X -> Y_1 ... Y_n`` is preceded by a
coordinator (``Y_{h-1}`` is CC or CONJP) and ``h > 2``, the head becomes ``Y_{h-2}``, the left conjunct.

Punctuation (:data:`PUNCT_TAGS`: ``, : . `` '' -LRB- -RRB-``, the punctuation tags of Stanford's
``PennTreebankLanguagePack``). In Collins' parser punctuation never heads a constituent: the trees are
preprocessed so that punctuation is taken out of the head-finding (removed at the sentence edges, raised out of
constituents elsewhere; Collins 1999, and Bikel 2004 for the details), so it also never stands between a
coordinator and the conjunct the head moves to. We follow that by choosing heads among the children that are
not punctuation: a preterminal with a punctuation tag, or a constituent all of whose words are punctuation, is
skipped by the table, by the defaults ("first child", "last word") and by the coordination rule, unless every
child is punctuation. (Kong's re-implementation skips punctuation in the defaults and the coordination rule in
the same way.) Punctuation words stay in the dependency tree, attached to the head word of the constituent that
contains them; ``drop_punct=True`` removes them (no other word can depend on one, see :func:`to_dependencies`).

Deviations and choices (all deliberate, all visible in the tests)
-----------------------------------------------------------------
- Collins *raises* punctuation as high as possible in the tree; we leave each punctuation mark where the parser
  put it, so it depends on the head of its own constituent.
- Labels without a row (NX, X, and anything a parser invents) take the leftmost non-punctuation child: Collins'
  table has no NX or X row and his parser falls back to the leftmost child (Bikel 2004, section 3.12). Stanford's
  ``CollinsHeadFinder`` adds ``X -> right``; we do not.
- The coordination rule also looks at CONJP (as Stanford's implementation does; the thesis names CC) and applies
  to every choice, including the defaults (Stanford applies it only when a table entry matched).
- ``ROOT`` with several children, the tree of a line parsed sentence by sentence (issue 33,
  :func:`syneval_nb.parsers.sentences.join_trees`: ``(ROOT (S ...) (S ...))``), has the row ``ROOT -> left``, no
  listed category: the first sentence (its first child that is not punctuation) heads the line, and the head word
  of every other sentence depends on the first sentence's head word. Collins' trees have one sentence under
  ``TOP``, so his table has no such row; "left" is what his parser does for a label without a row, so the row
  changes no head, only names the rule (and a one-sentence tree is read without its ``ROOT``: see
  :func:`syneval_nb.trees.ptb.read_ptb`). The sentences' own dependencies are exactly those of their trees alone.
- Collins' parser does not move the head inside base NPs (NPB; Bikel 2004, Figure 6); Appendix A states the rule
  without that exception and so do we: in ``(NP (NNP John) (CC and) (NNP Jane))`` the head is ``John``.
- Collins' parser also re-heads NPs it has flattened (possessives, base NPs); we apply the rules to the tree as
  given, which is what a head table over parser output can do.

Speed: :func:`to_dependencies` works on the preorder arrays of a :class:`~syneval_nb.trees.FlatTree` (read
straight from a string, or flattened from an ``nltk.Tree``), bottom-up without recursion (one pass,
``_head_pass``, which :func:`lexicalize` and :func:`explain_tree` also use);
:meth:`DependencyTree.to_flat` gives the word-labelled tree as arrays for the DSTM/DTKM encodings without building
``nltk.Tree`` objects. Nothing here makes reference cycles. With the compiled extension built, the head pass, the
dependents, the preorder and the chain counts run as compiled twins (:mod:`syneval_nb._accel`; same results).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:  # nltk is imported where a tree is made (trees.ptb), not for this module
    from nltk import Tree

from .._accel import speedups as _C
from syneval_nb.trees.ptb import FlatTree, TreeFormatError, draw, flatten, nltk_tree_class, read_ptb_flat

__all__ = ["PUNCT_TAGS", "HEAD_RULES", "NP_RULES", "to_dependencies", "lexicalize", "explain_tree",
           "headword_chains", "dependency_lengths", "attachment_statistics", "DependencyTree"]

PUNCT_TAGS: frozenset[str] = frozenset({",", ":", ".", "``", "''", "-LRB-", "-RRB-"})
"""Part-of-speech tags treated as punctuation (Stanford ``PennTreebankLanguagePack.punctuationTags``)."""

COORDINATORS: frozenset[str] = frozenset({"CC", "CONJP"})

# Collins (1999), Appendix A: parent -> (direction, priority list). "left" = search starts at the left end.
HEAD_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": ("left", ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS", "DT", "FW",
                      "RBR", "RBS", "SBAR", "RB")),
    "ADVP": ("right", ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN")),
    "CONJP": ("right", ("CC", "RB", "IN")),
    "FRAG": ("right", ()),
    "INTJ": ("left", ()),
    "LST": ("right", ("LS", ":")),
    "NAC": ("left", ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ", "JJS",
                     "JJR", "ADJP", "FW")),
    "PP": ("right", ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": ("left", ()),
    "PRT": ("right", ("RP",)),
    "QP": ("left", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "ROOT": ("left", ()),  # the kit's multi-sentence root (issue 33; not Collins': see "Deviations")
    "RRC": ("right", ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": ("left", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": ("left", ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG")),
    "SBARQ": ("left", ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": ("right", ()),
    "VP": ("left", ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),
    "WHADJP": ("left", ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": ("right", ("CC", "WRB")),
    "WHNP": ("left", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": ("right", ("IN", "TO", "FW")),
}

# Collins (1999), Appendix A, the NP rule: steps tried in order; each scans the children by position.
NP_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("right", ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR")),
    ("left", ("NP",)),
    ("right", ("$", "ADJP", "PRN")),
    ("right", ("CD",)),
    ("right", ("JJ", "JJS", "RB", "QP")),
)

_DEFAULT_DIRECTION = "left"  # labels without a row (NX, X, ...): leftmost child, as in Collins' parser


def _choose(label: str, labels: Sequence[str], punct: Sequence[bool]) -> tuple[int, str]:
    """The head child's index among ``labels`` and the rule that chose it (see the module docstring)."""
    n = len(labels)
    if n == 1:
        return 0, "only child"
    cand = [j for j in range(n) if not punct[j]] or list(range(n))  # punctuation is never the head
    cl = [labels[j] for j in cand]
    m = len(cl)
    pos, why = -1, ""
    if label == "NP":
        for step, (direction, cats) in enumerate(NP_RULES, 1):
            order = range(m - 1, -1, -1) if direction == "right" else range(m)
            pos = next((p for p in order if cl[p] in cats), -1)
            if pos >= 0:
                which = "rightmost" if direction == "right" else "leftmost"
                why = f"NP rule {step}: {which} of {' '.join(cats)}"
                break
        else:
            pos, why = m - 1, "NP rule 6: the last word"
    else:
        direction, priority = HEAD_RULES.get(label, (_DEFAULT_DIRECTION, ()))
        order = list(range(m - 1, -1, -1) if direction == "right" else range(m))
        for cat in priority:
            pos = next((p for p in order if cl[p] == cat), -1)
            if pos >= 0:
                why = f"{label} ({direction}): first of the priority list found is {cat}"
                break
        else:
            pos = order[0]
            which = "rightmost" if direction == "right" else "leftmost"
            why = (f"{label} ({direction}): no listed category, the {which} child" if label in HEAD_RULES
                   else f"{label}: no row in the table, the leftmost child")
    if pos >= 2 and cl[pos - 1] in COORDINATORS:
        why += f"; coordination: {cl[pos]} follows {cl[pos - 1]}, the head moves to {cl[pos - 2]}"
        pos -= 2
    return cand[pos], why


@lru_cache(maxsize=1 << 16)
def head_index(label: str, labels: tuple[str, ...], punct: tuple[bool, ...]) -> int:
    return _choose(label, labels, punct)[0]


def _flags(label: str, child_labels: Sequence[str], punct: Sequence[bool] | None) -> tuple[tuple[str, ...],
                                                                                         tuple[bool, ...]]:
    if not child_labels:
        raise ValueError(f"{label!r} has no children, there is no head to find")
    labels = tuple(child_labels)
    p = tuple(l in PUNCT_TAGS for l in labels) if punct is None else tuple(bool(x) for x in punct)
    if len(p) != len(labels):
        raise ValueError(f"{len(labels)} child labels but {len(p)} punctuation flags")
    return labels, p


def find_head_child(label: str, child_labels: Sequence[str], punct: Sequence[bool] | None = None) -> int:
    """Index of the head child of ``label -> child_labels`` under the Collins (1999) rules.

    ``punct[j]`` says whether child ``j`` is punctuation (a punctuation tag, or a phrase of punctuation words
    only); by default a child is punctuation when its label is in :data:`PUNCT_TAGS`.
    """
    return head_index(label, *_flags(label, child_labels, punct))


def explain_head(label: str, child_labels: Sequence[str], punct: Sequence[bool] | None = None) -> tuple[int, str]:
    """Like :func:`find_head_child`, with a sentence naming the rule that chose the head (for notebooks)."""
    return _choose(label, *_flags(label, child_labels, punct))


# ------------------------------------------------------------------------------------------ dependencies


@dataclass
class DependencyTree:
    """Words with their tags and heads (0-based word indices; ``-1`` marks the root). Exactly one root.

    Validated on construction (equal lengths, one root, no cycle); treat it as immutable afterwards (the
    dependents of each word are computed once, in ``__post_init__``). An empty tree (no words) is allowed.

    ``str(dep)`` is an indented picture; :meth:`to_conll` the CoNLL-X columns; :meth:`to_nltk` the word-labelled
    tree that DSTM/DTKM and the tree kernel consume; in a notebook the tree shows as an SVG picture.
    """

    words: list[str]
    tags: list[str]
    heads: list[int]
    _kids: list[list[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.words)
        if len(self.tags) != n or len(self.heads) != n:
            raise ValueError(f"{n} words, {len(self.tags)} tags and {len(self.heads)} heads: lengths must agree")
        kids: list[list[int]] = [[] for _ in range(n)]
        roots = []
        for d, h in enumerate(self.heads):
            if h == -1:
                roots.append(d)
            elif 0 <= h < n and h != d:
                kids[h].append(d)
            else:
                raise ValueError(f"word {d} ({self.words[d]!r}) has head {h}, expected -1 or another word 0..{n - 1}")
        if n and len(roots) != 1:
            raise ValueError(f"a dependency tree has exactly one root (head -1), found {len(roots)}: {roots}")
        self._kids = kids
        if n and self._reachable() != n:
            raise ValueError("the heads contain a cycle: not every word is reached from the root")

    @classmethod
    def _trusted(cls, words: list[str], tags: list[str], heads: list[int]) -> "DependencyTree":
        """Construct without the validation, for heads that are a tree by construction (:func:`to_dependencies`)."""
        dep = cls.__new__(cls)
        dep.words, dep.tags, dep.heads = words, tags, heads
        if _C is not None:
            dep._kids = _C.dependents(heads)
            return dep
        kids: list[list[int]] = [[] for _ in heads]
        for d, h in enumerate(heads):
            if h >= 0:
                kids[h].append(d)
        dep._kids = kids
        return dep

    def _reachable(self) -> int:
        stack, seen = [self.root], 0
        while stack:
            i = stack.pop()
            seen += 1
            stack.extend(self._kids[i])
        return seen

    def __len__(self) -> int:
        return len(self.words)

    @property
    def root(self) -> int:
        """Index of the root word (the sentence's head word)."""
        if not self.words:
            raise ValueError("an empty dependency tree has no root")
        return self.heads.index(-1)

    def children(self, i: int) -> list[int]:
        """Indices of the dependents of word ``i``, in surface order."""
        return list(self._kids[i])

    def to_nltk(self) -> Tree:
        """The word-labelled tree: node label = word, children = its dependents' trees in surface order (a new
        ``nltk.Tree`` on every call)."""
        f = self.to_flat()
        return FlatTree(f.labels, f.kids, f.words).to_tree()

    def to_flat(self) -> FlatTree:
        """:meth:`to_nltk` as a :class:`~syneval_nb.trees.FlatTree` (nodes in preorder, labelled with the words;
        no node has a word child), without building ``nltk.Tree`` objects; cached."""
        flat = self.__dict__.get("_flat")
        if flat is not None:
            return flat
        if not self.words:
            raise ValueError("an empty dependency tree has no nltk form")
        words, kids = self.words, self._kids
        if _C is not None:
            labels, fkids = _C.dep_preorder(words, kids, self.heads.index(-1))
            flat = self.__dict__["_flat"] = FlatTree(labels, fkids, [None] * len(labels))
            return flat
        order: list[int] = []  # word indices in preorder
        add = order.append
        stack = [self.heads.index(-1)]
        while stack:
            i = stack.pop()
            add(i)
            ks = kids[i]
            if ks:
                stack += ks[::-1]
        pos = [0] * len(words)
        for k, i in enumerate(order):
            pos[i] = k
        flat = FlatTree([words[i] for i in order], [tuple([pos[d] for d in kids[i]]) for i in order],
                        [None] * len(order))
        self.__dict__["_flat"] = flat
        return flat

    def to_conll(self) -> str:
        """CoNLL-X style lines ``ID FORM POSTAG HEAD`` (1-based ids, head 0 for the root)."""
        return "\n".join(f"{d + 1}\t{w}\t{t}\t{h + 1}" for d, (w, t, h) in
                         enumerate(zip(self.words, self.tags, self.heads)))

    def pretty(self) -> str:
        """An indented drawing, one word per line: ``word/TAG``, dependents below their head."""
        if not self.words:
            return "(empty)"
        lines: list[str] = []

        def walk(i: int, prefix: str, branch: str, last: bool) -> None:
            lines.append(f"{prefix}{branch}{self.words[i]}/{self.tags[i]}")
            kids = self._kids[i]
            ext = prefix + ("" if not branch else ("    " if last else "│   "))
            for j, k in enumerate(kids):
                end = j == len(kids) - 1
                walk(k, ext, "└── " if end else "├── ", end)

        try:
            walk(self.root, "", "", True)
        finally:
            walk = None  # a recursive closure is a reference cycle: break it
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.pretty()

    def draw(self, **options):
        """An svgling picture of :meth:`to_nltk` (see :func:`syneval_nb.trees.draw`)."""

        return draw(self.to_nltk(), **options)

    def _repr_svg_(self) -> str:  # Jupyter
        return self.draw()._repr_svg_()


def to_dependencies(tree: "Tree | str | FlatTree", drop_punct: bool = False) -> DependencyTree:
    """The dependency tree of a constituency tree under the Collins (1999) head rules (module docstring).

    Every word's head is the head word of the lowest constituent in which the word's own maximal projection is
    not the head child; the head word of the whole tree is the root. ``drop_punct=True`` removes the words tagged
    with :data:`PUNCT_TAGS` afterwards; since punctuation is never chosen as a head while a sibling is not
    punctuation, no other word depends on a punctuation mark and the rest of the tree is unchanged (a sentence
    made only of punctuation gives an empty tree). ``tree`` may also be a bracketed string (read with the reader of
    :func:`~syneval_nb.trees.read_ptb`, without building an ``nltk.Tree``) or a :class:`~syneval_nb.trees.FlatTree`.
    """
    if isinstance(tree, str):
        flat = read_ptb_flat(tree)
    elif isinstance(tree, FlatTree):
        flat = tree
    elif isinstance(tree, nltk_tree_class()):
        flat = flatten(tree)
    else:
        raise TypeError(f"to_dependencies expects an nltk.Tree, a FlatTree or a bracketed string, got "
                        f"{type(tree).__name__}")
    dep = DependencyTree._trusted(*_head_pass(flat)[:3])
    return _drop_punct(dep) if drop_punct else dep


def _head_pass(flat: FlatTree) -> tuple[list[str], list[str], list[int], list[int], list[bool]]:
    """:func:`_head_pass_py`, in compiled code when :mod:`syneval_nb._speedups` is built (the same results)."""
    if _C is not None:
        return _C.head_pass(flat.labels, flat.kids, flat.words, PUNCT_TAGS, head_index, TreeFormatError)
    return _head_pass_py(flat)


def _head_pass_py(flat: FlatTree) -> tuple[list[str], list[str], list[int], list[int], list[bool]]:
    """The one bottom-up pass of the head rules over the preorder arrays of a (PTB-shaped)
    :class:`~syneval_nb.trees.FlatTree`: a node's head word is its head child's head word, and the other children's
    head words depend on it. Returns the words, tags and heads, and per node its head word (an index among the
    words) and whether all its words are punctuation (what :func:`lexicalize` and :func:`explain_tree` show)."""
    labels, kids, fwords = flat.labels, flat.kids, flat.words
    n = len(labels)
    hw = [0] * n  # the node's head word (index among the words)
    punct = [False] * n  # whether all the node's words are punctuation
    words: list[str] = []
    tags: list[str] = []
    for i, w in enumerate(fwords):  # preterminals in preorder are the words in surface order
        if w is not None:
            hw[i] = len(words)
            words.append(w)
            tag = labels[i]
            tags.append(tag)
            punct[i] = tag in PUNCT_TAGS
    heads = [-1] * len(words)
    for i in range(n - 1, -1, -1):
        ks = kids[i]
        if len(ks) < 2:
            if ks:  # a single child: its head word and punctuation flag go up
                c = ks[0]
                hw[i] = hw[c]
                punct[i] = punct[c]
            elif fwords[i] is None:
                raise TreeFormatError(f"constituent {labels[i]!r} has no children")
            continue
        ps = tuple([punct[c] for c in ks])
        hc = ks[head_index(labels[i], tuple([labels[c] for c in ks]), ps)]
        head = hw[hc]
        for c in ks:
            if c != hc:
                heads[hw[c]] = head
        hw[i] = head
        punct[i] = False not in ps
    return words, tags, heads, hw, punct


def _drop_punct(dep: DependencyTree) -> DependencyTree:
    keep = [i for i, t in enumerate(dep.tags) if t not in PUNCT_TAGS]
    new = {old: k for k, old in enumerate(keep)}
    heads = []
    for i in keep:
        h = dep.heads[i]
        if h != -1 and h not in new:  # cannot happen with the rules above; kept as a guard
            raise ValueError(f"word {dep.words[i]!r} depends on the punctuation mark {dep.words[h]!r}")
        heads.append(-1 if h == -1 else new[h])
    if keep and dep.tags[dep.root] in PUNCT_TAGS:
        raise ValueError("the root is punctuation but other words are not")
    return DependencyTree([dep.words[i] for i in keep], [dep.tags[i] for i in keep], heads)


def lexicalize(tree: Tree) -> Tree:
    """A copy of ``tree`` whose phrase labels carry their head word, ``NP[pen]``, for pictures of the rules."""
    flat = flatten(tree)
    words, _, _, hw, _ = _head_pass(flat)
    labels = [lab if w is not None else f"{lab}[{words[hw[i]]}]"
              for i, (lab, w) in enumerate(zip(flat.labels, flat.words))]
    return FlatTree(labels, flat.kids, flat.words).to_tree()


def explain_tree(tree: Tree) -> list[dict]:
    """One row per phrase (preorder): its label, children, head child, head word and the rule that chose it."""
    flat = flatten(tree)
    words, _, _, hw, punct = _head_pass(flat)
    rows: list[dict] = []
    for i, ks in enumerate(flat.kids):
        if flat.words[i] is not None:
            continue
        labels = [flat.labels[c] for c in ks]
        h, why = explain_head(flat.labels[i], labels, [punct[c] for c in ks])
        rows.append({"constituent": flat.labels[i], "children": " ".join(labels), "head child": labels[h],
                     "head word": words[hw[ks[h]]], "rule": why})
    return rows


def chain_counts(dep: DependencyTree, max_len: int) -> Counter:
    """``Counter(headword_chains(dep, max_len))``, counted in compiled code when it is built (same counts, same
    key order)."""
    if _C is not None:
        return _C.chain_counts(dep.words, dep._kids, max_len, Counter())
    return Counter(headword_chains(dep, max_len))


def headword_chains(dep: DependencyTree, max_len: int) -> list[tuple[str, ...]]:
    """All head-to-dependent downward paths of 1..``max_len`` words (Liu & Gildea 2005, Figure 3).

    A chain of length 1 is a word; a chain of length ``k + 1`` extends a chain of length ``k`` by one dependent
    of its last word. Returned from short to long; within a length, in the order of their first word and then of
    the dependents (surface order). Every occurrence is listed (these are counts, as in BLEU's n-grams).
    """
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}")
    words = dep.words
    kids = dep._kids
    out = [(w,) for w in words]
    level = [(i, c) for i, c in enumerate(out)]  # (last word, chain)
    for _ in range(max_len - 1):
        level = [(k, c + (words[k],)) for i, c in level for k in kids[i]]
        if not level:
            break
        out.extend([c for _, c in level])
    return out


def dependency_lengths(dep: DependencyTree) -> list[int]:
    """Signed arc lengths ``head - dependent`` of the non-root words, in word order: positive when the head
    follows the word (head to the right), negative when it precedes it (head to the left)."""
    return [h - d for d, h in enumerate(dep.heads) if h >= 0]


def attachment_statistics(deps: Iterable[DependencyTree]) -> dict:
    """Descriptive statistics of a set of dependency trees (for notebooks and the closing notes).

    Over all non-root words: ``head_left`` is the share whose head precedes them (head to the left), ``head_right``
    the share whose head follows them; ``mean_dependency_length`` is the mean of ``|head - dependent|``;
    ``mean_children`` the mean number of dependents of a word. ``root_tags`` counts the root word's tag per tree
    (a Counter), ``punct_share`` is the share of words tagged with :data:`PUNCT_TAGS`.
    """
    n_trees = n_words = n_arcs = left = punct = 0
    dist = 0
    roots: Counter = Counter()
    for dep in deps:
        n_trees += 1
        n_words += len(dep)
        if not len(dep):
            continue
        roots[dep.tags[dep.root]] += 1
        punct += sum(t in PUNCT_TAGS for t in dep.tags)
        lengths = dependency_lengths(dep)
        n_arcs += len(lengths)
        left += sum(x < 0 for x in lengths)
        dist += sum(abs(x) for x in lengths)
    return {
        "n_trees": n_trees,
        "n_words": n_words,
        "n_arcs": n_arcs,
        "head_left": left / n_arcs if n_arcs else float("nan"),
        "head_right": (n_arcs - left) / n_arcs if n_arcs else float("nan"),
        "mean_dependency_length": dist / n_arcs if n_arcs else float("nan"),
        "mean_children": n_arcs / n_words if n_words else float("nan"),
        "punct_share": punct / n_words if n_words else float("nan"),
        "root_tags": roots,
    }
