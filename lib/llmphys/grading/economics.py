"""Checks for the Implement exercises of chapter 6, economics (see ``llmphys.grading``).

Home: chapters/06_economics.ipynb.
"""

__all__: list[str] = []
