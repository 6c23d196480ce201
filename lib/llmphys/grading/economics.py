"""Checks for the Implement exercises of chapter 6, economics (see ``llmphys.grading``)."""

__all__: list[str] = []
