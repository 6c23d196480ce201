"""Checks for the Implement exercises of chapter 5, scaling laws (see ``llmphys.grading``)."""

__all__: list[str] = []
