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

    def add(self, kind: str, location: str) -> None:
        self.grouped.setdefault(kind, []).append(location)

    def note(self, line: str) -> None:
        self.lines.append(line)

    def render(self) -> list[str]:
        out = []
        for kind, locations in self.grouped.items():
            shown = ", ".join(locations[:SHOWN_LOCATIONS])
            more = len(locations) - SHOWN_LOCATIONS
            suffix = f" and {more} more" if more > 0 else ""
            out.append(f"{len(locations)} {kind}: {shown}{suffix}.")
        return out + self.lines
