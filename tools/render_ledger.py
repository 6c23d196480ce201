"""Print the claims ledger as the ledger page renders it: verdict counts, every table row, every
note.

The guard for changes to the ledger's machinery: render before and after, and diff. Only the
"Call:" lines may differ when the mechanism changes and no verdict is meant to move.

    python tools/render_ledger.py > before.md
"""

import re

from llmphys import claims

# How the details render "the call" (before: an inline expression; now: the check function's
# source as a code block); everything else of a note must stay identical.
CALL = re.compile(r"Call: `[^`]*`\. |\n\n  The call:\n\n  ```python\n.*?\n  ```", re.S)


def _call(c: claims.Claim) -> str:
    """The call on one line: the check function's source, or an old-style expression."""
    if getattr(c, "checker", None) is not None:
        return " ".join(claims.call_source(c.checker).split())
    return getattr(c.check, "expr", "") if c.check is not None else ""


def main() -> None:
    ledger = claims.ledger()
    print(claims.summary_markdown(ledger))
    for letter in claims.SOURCES:
        rows = [a for a in ledger if a.claim.id.startswith(letter)]
        print()
        print(claims.ledger_markdown(rows))
        print()
        # one note per line, so that a diff names the claim whose note moved; the call apart
        for a, block in zip(rows, re.split(r"\n\n(?=<a href)", claims.details_markdown(rows)),
                            strict=True):
            print(CALL.sub("", block.replace("\n: ", " : ")))
            print(f"    call {a.claim.id}: {_call(a.claim)}")


if __name__ == "__main__":
    main()
