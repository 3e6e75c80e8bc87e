"""`python -m orchestrator`: see orchestrator.cli."""

import sys

from .cli import main

sys.exit(main())
