"""``python -m hare``."""

import sys

from hare.cli import main

sys.exit(main())
