"""Checks for the Implement exercises of chapter 4, the memory wall (see ``llmphys.grading``)."""

__all__: list[str] = []
