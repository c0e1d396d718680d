"""`python -m tfproc_lint`: the same as the `tfproc-lint` command."""

import sys

from tfproc_lint.cli import main

sys.exit(main())
