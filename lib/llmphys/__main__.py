"""``python -m llmphys``: the command line of :mod:`llmphys.cli`.

Home: chapters/your_own_model.ipynb.
"""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
