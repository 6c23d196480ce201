"""Checks for the Implement exercises of chapter 3, architecture (see ``llmphys.grading``).

Home: chapters/03_architecture.ipynb.
"""

__all__: list[str] = []
