"""Checks for the Implement exercises of chapter 1, foundations (see ``llmphys.grading``)."""

__all__: list[str] = []
