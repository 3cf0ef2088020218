"""Collect load warnings as short lines that name files or row numbers, never document text.

Repeated problems of one kind are grouped into a single line with the first few
locations, so a file with a thousand empty rows gives one readable warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SHOWN_LOCATIONS = 8


@dataclass
class WarningCollector:
    """Grouped warnings: ``add(kind, location)`` for repeated problems, ``note(line)`` for one-offs."""

    grouped: dict[str, list[str]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    file_kinds: set[str] = field(default_factory=set)  # the kinds that skip whole files of a folder

    def add(self, kind: str, location: str, skips_file: bool = False) -> None:
        self.grouped.setdefault(kind, []).append(location)
        if skips_file:
            self.file_kinds.add(kind)

    def note(self, line: str) -> None:
        self.lines.append(line)

    def render(self, files_only: bool = False) -> list[str]:
        """Every warning line; ``files_only``: only the lines of files skipped whole."""
        out = []
        for kind, locations in self.grouped.items():
            if files_only and kind not in self.file_kinds:
                continue
            shown = ", ".join(locations[:SHOWN_LOCATIONS])
            more = len(locations) - SHOWN_LOCATIONS
            suffix = f" and {more} more" if more > 0 else ""
            out.append(f"{len(locations)} {kind}: {shown}{suffix}.")
        return out if files_only else out + self.lines
