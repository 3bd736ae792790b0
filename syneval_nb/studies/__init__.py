"""Study code of the chapters: one module per notebook (``syneval_nb.studies.chNN_<name>`` style names are not
required; each module's docstring names its notebook). Concept modules (trees, heads, kernels, metrics, stats,
...) hold concepts only; a notebook cell calls one function of its study module per table or figure."""
