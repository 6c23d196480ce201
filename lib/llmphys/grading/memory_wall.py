"""Checks for the Implement exercises of chapter 4, the memory wall (see ``llmphys.grading``).

Home: chapters/04_memory_wall.ipynb.
"""

__all__: list[str] = []
