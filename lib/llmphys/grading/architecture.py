"""Checks for the Implement exercises of chapter 3, architecture (see ``llmphys.grading``)."""

__all__: list[str] = []
