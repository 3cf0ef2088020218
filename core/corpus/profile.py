"""What each column of a table file holds, in numbers that quote none of it: the column pickers' statistics.

For each column: its average words per row (over the rows where it is filled), the share of its filled cells that
are numbers, the share of rows where it is filled and how many different values it holds. No cell's text, and no
value, is ever part of a profile, so the wizard can list the columns of a file without a header row ("column 1",
"column 2", …) with words to choose by. Like the load report, these are statistics of private data without noise:
shown on this computer to the custodian, never exported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.corpus.columns import suggest_columns
from core.corpus.loader import DEFAULT_MAX_FILE_BYTES, read_table

PROFILE_ROWS = 5000  # rows read for the statistics (the first ones): enough to tell a text column from an id


@dataclass(frozen=True)
class ColumnProfile:
    """One column's statistics (never a value of it)."""

    name: str
    words_per_row: float  # over the rows where the column is filled
    numeric_share: float  # of the filled cells
    filled_share: float  # of the rows read
    distinct: int  # different values among the rows read
    n_rows: int  # rows read

    def words(self) -> str:
        """'about 14 words a row, no numbers, 40 different values' (for a column picker)."""
        words = f"{self.words_per_row:.1f}" if self.words_per_row < 10 else f"{self.words_per_row:.0f}"
        numbers = ("no numbers" if self.numeric_share == 0 else "all numbers" if self.numeric_share == 1
                   else f"{100 * self.numeric_share:.0f} % numbers")
        filled = self.filled_share * self.n_rows
        different = ("every row different" if filled > 1 and self.distinct >= filled
                     else f"{self.distinct:,} different value{'s' if self.distinct != 1 else ''}")
        empty = f", empty in {100 * (1 - self.filled_share):.0f} % of rows" if self.filled_share < 0.995 else ""
        return f"{words} words a row, {numbers}, {different}{empty}"

    def choice(self) -> str:
        """The picker's line: the column's name with its statistics."""
        return f"{self.name} — {self.words()}"


@dataclass(frozen=True)
class TableColumns:
    """The columns of a table file as the pickers list them: names (a header row's, or by position), profiles."""

    has_header: bool
    profiles: list[ColumnProfile]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.profiles]

    def suggested(self) -> dict[str, str]:
        """Likely text / id / person columns: by name, or (without a header row) the wordiest column as the text."""
        return suggest_columns(self.names, {p.name: p.words_per_row for p in self.profiles})


def table_columns(path: str | Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                  max_rows: int = PROFILE_ROWS) -> TableColumns:
    """The columns of the table file ``path`` with their statistics over its first ``max_rows`` rows ([] for a
    folder); raises ``CorpusError`` as loading would."""
    source = Path(path).expanduser()
    if source.is_dir():
        return TableColumns(True, [])
    table = read_table(source, max_file_bytes)
    rows = table.rows[:max_rows]
    return TableColumns(table.has_header, [_profile(name, [row.values.get(name) for row in rows])
                                           for name in table.columns])


def _profile(name: str, cells: list[Any]) -> ColumnProfile:
    filled = [_text(cell) for cell in cells if _text(cell).strip()]
    numeric = sum(1 for cell in filled if _is_number(cell))
    words = sum(len(cell.split()) for cell in filled)
    return ColumnProfile(
        name=name,
        words_per_row=words / len(filled) if filled else 0.0,
        numeric_share=numeric / len(filled) if filled else 0.0,
        filled_share=len(filled) / len(cells) if cells else 0.0,
        distinct=len(set(filled)),
        n_rows=len(cells),
    )


def _text(cell: Any) -> str:
    if cell is None:
        return ""
    if isinstance(cell, (str, bool, int, float)):
        return str(cell)
    return ""  # a JSON list or object is no text


def _is_number(text: str) -> bool:
    try:
        float(text.strip().replace(",", ""))
    except ValueError:
        return False
    return True
