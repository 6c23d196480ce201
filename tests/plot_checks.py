"""Checks shared by the figure tests (tests/test_plots*.py)."""


def assert_units_in_labels(fig) -> None:
    """Every labelled axis of ``fig`` names its unit in parentheses, e.g. 'time (s)'."""
    for ax in fig.axes:
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if label:
                assert "(" in label and ")" in label, f"axis label without unit: {label!r}"
