"""The ``syneval-nb`` command and what only it needs: score rendering, the notebook runner, the report."""
