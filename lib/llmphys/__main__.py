"""``python -m llmphys``: the command line of :mod:`llmphys.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
