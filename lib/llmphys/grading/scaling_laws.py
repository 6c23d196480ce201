"""Checks for the Implement exercises of chapter 5, scaling laws (see ``llmphys.grading``).

Home: chapters/05_scaling_laws.ipynb.
"""

__all__: list[str] = []
