"""Checks for the Implement exercises of the hardware tour (see ``llmphys.grading``)."""

__all__: list[str] = []
