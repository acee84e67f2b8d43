"""``python -m bytepair``: the same as the ``bytepair`` command."""

import sys

from .cli import main

sys.exit(main())
