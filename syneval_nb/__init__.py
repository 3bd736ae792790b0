"""syneval-nb: syntax- and discourse-aware evaluation of machine translation, as notebooks.

One folder per layer, each importing only from the layers before it (DEVELOPERS.md, "Layout"):
``trees`` (PTB trees, heads, kernels, RST trees), ``parsers`` (cache, Stanford, spaCy, Feng-Hirst, the front end,
Dask), ``data`` (loaders), ``metrics`` (one face and the registry: lexical, syntactic, discourse, learned),
``stats``, ``evaluate`` (the driver), ``studies`` (one module per chapter), ``app`` (the ``syneval-nb`` command).
"""
__version__ = "0.1.0"
