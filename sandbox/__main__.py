"""``python -m sandbox run|demo``: see sandbox/README.md."""

import sys

from sandbox.cli import main

sys.exit(main())
