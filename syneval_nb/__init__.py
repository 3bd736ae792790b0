"""syneval-nb: syntax- and discourse-aware evaluation of machine translation, as notebooks.

One module per concept (see DEVELOPERS.md for the map):
trees, heads, parsing, cache, lexical, kernels, syntactic, hybrid, learned, discourse, data, stats,
runner, paths, cli.
"""
__version__ = "0.1.0"
