"""The Collins & Duffy (2001) all-subtree ("subset tree") kernel, shared by the syntactic and the discourse metrics.

Definition (Collins & Duffy 2001, section 3; Liu & Gildea 2005, section 2). Let ``H(T)`` be the vector that counts, for
every tree fragment ``f``, how many times ``f`` occurs in ``T``. A *fragment* rooted at a node ``n`` contains ``n``'s
whole production (its label and the sequence of its children's labels, words included) and, for each child node,
either stops there or continues with a fragment rooted at that child. Then

    K(T1, T2) = H(T1) . H(T2) = sum over node pairs (n1, n2) of C(n1, n2)

    C(n1, n2) = 0                                        if the productions of n1 and n2 differ,
              = lam * prod_j (1 + C(ch_j(n1), ch_j(n2)))  otherwise (the product runs over child *nodes*;
                                                           an empty product is 1, so a preterminal gives lam).

With ``lam = 1`` ``K`` counts matching fragment pairs exactly; ``0 < lam < 1`` down-weights a fragment with ``s``
productions by ``lam ** s`` (Collins & Duffy's decay). The cosine ``K(T1,T2) / sqrt(K(T1,T1) K(T2,T2))`` is in [0, 1].

Trees are generic :class:`nltk.Tree` objects: a ``Tree`` child is a node, a ``str`` child is a terminal that belongs
to its parent's production (so a PTB preterminal ``(DT the)`` has the production ``DT -> the``). This covers
constituency trees, the word-labelled dependency trees of :meth:`syneval_nb.trees.heads.DependencyTree.to_nltk` (every
word is a node; a word without dependents is ``Tree(word, [])`` and is a one-node fragment) and the RST trees of
:mod:`syneval_nb.metrics.discourse`.

Speed: trees are encoded once as integers (:func:`syneval_nb.trees.encoding.encode`); :class:`KernelTree` groups node indices
by production id, so only node pairs with equal productions are visited, bottom-up, each ``C`` computed once. A
:class:`KernelTree` caches its self-kernel per ``lam``, so a reference's ``K(r, r)`` is computed once however many
hypotheses are compared with it (see :func:`cosine`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from syneval_nb.trees.encoding import EncodedTree, Interner, encode


if TYPE_CHECKING:  # annotations only: nltk (with scikit-learn) is imported where a tree is made (trees.ptb)
    from nltk import Tree


__all__ = ["kernel", "cosine", "tree_kernel"]


def check_lam(lam: float) -> float:
    lam = float(lam)
    if not 0.0 < lam <= 1.0:
        raise ValueError(f"the decay lam must be in (0, 1], got {lam}")
    return lam


class KernelTree:
    """An encoded tree prepared for kernel computations: node indices grouped by production, cached self-kernels.

    All the trees that are compared must be encoded with the same :class:`~syneval_nb.trees.encoding.Interner`.
    """

    __slots__ = ("enc", "by_prod", "_self")

    def __init__(self, enc: EncodedTree) -> None:
        self.enc = enc
        by_prod: dict[int, list[int]] = {}
        for i, p in enumerate(enc.prods):
            lst = by_prod.get(p)
            if lst is None:
                by_prod[p] = [i]
            else:
                lst.append(i)
        self.by_prod = by_prod
        self._self: dict[float, float] = {}

    @classmethod
    def from_tree(cls, t: Tree, interner: Interner) -> "KernelTree":
        """Encode ``t`` (an ``nltk.Tree``, or a :class:`~syneval_nb.trees.FlatTree`) with ``interner`` and prepare
        it; :func:`~syneval_nb.trees.encoding.encode` rejects anything else with a ``TypeError``."""
        return cls(encode(t, interner))

    def __len__(self) -> int:
        return len(self.enc)

    def self_kernel(self, lam: float = 1.0) -> float:
        """``K(T, T)``, computed once per ``lam`` and cached."""
        v = self._self.get(lam)
        if v is None:
            v = self._self[lam] = kernel(self, self, lam)
        return v


def _kernel(a: KernelTree, b: KernelTree, lam: float, per_node: list[float] | None) -> float:
    """The recursion of :func:`kernel`; with ``per_node`` also records, for every node ``i`` of ``a``,
    ``sum_j C(i, j)`` (the weighted number of fragments rooted at ``i`` that ``b`` shares)."""
    bp = b.by_prod
    prods_a = a.enc.prods
    ch_a = a.enc.children
    ch_b = b.enc.children
    n2 = len(b.enc)
    memo: dict[int, float] = {}
    get = memo.get
    total = 0.0
    for i in range(len(prods_a) - 1, -1, -1):
        js = bp.get(prods_a[i])
        if js is None:
            continue
        ca = ch_a[i]
        base = i * n2
        if not ca:
            for j in js:
                memo[base + j] = lam
            s = lam * len(js)
        else:
            s = 0.0
            for j in js:
                v = lam
                for x, y in zip(ca, ch_b[j]):
                    c = get(x * n2 + y)
                    if c is not None:
                        v *= 1.0 + c
                memo[base + j] = v
                s += v
        total += s
        if per_node is not None:
            per_node[i] = s
    return total


def kernel(a: KernelTree, b: KernelTree, lam: float = 1.0) -> float:
    """``K(a, b)`` by the Collins & Duffy recursion (module docstring), visiting only equal-production node pairs.

    Nodes are in preorder, so every child has a larger index than its parent: walking ``a``'s nodes from the last to
    the first computes each ``C(child pair)`` before its parents need it. Equal productions imply the same number
    of child nodes; a child pair missing from the memo has different productions, ``C = 0``, factor 1.
    """
    return _kernel(a, b, check_lam(lam), None)


def kernel_contributions(a: KernelTree, b: KernelTree, lam: float = 1.0) -> list[float]:
    """For every node ``i`` of ``a`` (preorder), ``sum_j C(i, j)``: the (``lam``-weighted) number of fragments rooted
    at ``i`` that also occur in ``b``. The list sums to ``K(a, b)``; used to explain kernel scores."""
    per_node = [0.0] * len(a.enc)
    _kernel(a, b, check_lam(lam), per_node)
    return per_node


def cosine(a: KernelTree, b: KernelTree, lam: float = 1.0) -> float:
    """``K(a,b) / sqrt(K(a,a) K(b,b))`` (Liu & Gildea 2005, the cosine of the fragment-count vectors), in [0, 1]."""
    k = kernel(a, b, lam)
    if k == 0.0:
        return 0.0
    # the self-kernels are >= the cross kernel's terms; clamp rounding error above 1
    return min(1.0, k / math.sqrt(a.self_kernel(lam) * b.self_kernel(lam)))


def max_cosine(hyp: KernelTree, refs: Sequence[KernelTree], lam: float = 1.0) -> tuple[float, int]:
    """TKM's reference step: the maximum cosine over the references and the index of the best one (-1 if none)."""
    best, arg = 0.0, -1
    for r, ref in enumerate(refs):
        c = cosine(hyp, ref, lam)
        if arg < 0 or c > best:
            best, arg = c, r
    return best, arg


def tree_kernel(t1: Tree, t2: Tree, lam: float = 1.0) -> float:
    """Collins & Duffy all-subtree kernel ``K(t1, t2)`` of two nltk trees (see the module docstring)."""
    interner = Interner()
    return kernel(KernelTree.from_tree(t1, interner), KernelTree.from_tree(t2, interner), lam)


def normalized_tree_kernel(t1: Tree, t2: Tree, lam: float = 1.0) -> float:
    """The cosine ``K(t1,t2) / sqrt(K(t1,t1) K(t2,t2))`` of two nltk trees, in [0, 1]."""
    interner = Interner()
    return cosine(KernelTree.from_tree(t1, interner), KernelTree.from_tree(t2, interner), lam)
