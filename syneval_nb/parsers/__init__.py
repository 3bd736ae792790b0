"""Parsers: the persistent cache, the backends (Stanford, spaCy, Feng-Hirst with its in-process CRF), the front
end that serves trees through the cache, and the optional Dask back end (:mod:`syneval_nb.parsers.dask`, imported
only when a scheduler is given).

Importing the package registers every backend's result check with the cache (:func:`~.cache.register_check`).
"""

from . import feng_hirst, spacy, stanford  # noqa: F401,E402  (each registers its result check with the cache)
