"""Checks for the Implement exercises of chapter 2, data (see ``llmphys.grading``).

Home: chapters/02_data.ipynb.
"""

__all__: list[str] = []
