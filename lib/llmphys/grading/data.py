"""Checks for the Implement exercises of chapter 2, data (see ``llmphys.grading``)."""

__all__: list[str] = []
