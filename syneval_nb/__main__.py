"""``python -m syneval_nb ...`` is the ``syneval-nb`` command."""
import sys

from syneval_nb.app.cli import main

sys.exit(main())
