"""Checks for the Implement exercises of chapter 1, foundations (see ``llmphys.grading``).

Home: chapters/01_foundations.ipynb.
"""

__all__: list[str] = []
