"""``python -m workbench.cli``: the same as the ``workbench`` command."""

import sys

from . import main

sys.exit(main())
