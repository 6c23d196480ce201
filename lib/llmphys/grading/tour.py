"""Checks for the Implement exercises of the hardware tour (see ``llmphys.grading``).

Home: chapters/hardware_tour.ipynb.
"""

__all__: list[str] = []
