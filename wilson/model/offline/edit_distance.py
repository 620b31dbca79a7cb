"""How many edits (a letter added, dropped or changed, two letters swapped, also with letters between them) make one
word another: the Damerau-Levenshtein distance, for the few short words the offline rules read as typos.

Here rather than from a library: the words are short and few, and rapidfuzz cost a running Wilson 3.5 MiB.
"""

from __future__ import annotations


def distance(a: str, b: str, cutoff: int | None = None) -> int:
    """The edits from `a` to `b` (Lowrance and Wagner's algorithm); with `cutoff`, at most cutoff + 1."""
    if cutoff is not None and abs(len(a) - len(b)) > cutoff:
        return cutoff + 1
    far = len(a) + len(b)
    # rows 0 and columns 0 are the "far" border, row 1 and column 1 the distances from the empty word
    table = [[far] * (len(b) + 2)] + [[far, i] + [0] * len(b) for i in range(len(a) + 1)]
    table[1][1:] = range(len(b) + 1)
    last_row: dict[str, int] = {}  # a letter of `a` -> the last row it was in
    for i in range(1, len(a) + 1):
        last_column = 0  # the last column in this row whose letter of `b` matched
        for j in range(1, len(b) + 1):
            k, m = last_row.get(b[j - 1], 0), last_column
            same = a[i - 1] == b[j - 1]
            if same:
                last_column = j
            table[i + 1][j + 1] = min(
                table[i][j] + (0 if same else 1),
                table[i + 1][j] + 1,
                table[i][j + 1] + 1,
                table[k][m] + (i - k - 1) + 1 + (j - m - 1),
            )
        last_row[a[i - 1]] = i
    found = table[len(a) + 1][len(b) + 1]
    return found if cutoff is None else min(found, cutoff + 1)
