"""The budget page's table of what each ε is expected to release (``core.run.planning.epsilon_table``): drawing it,
suggesting the smallest ε that finds topics, and a row picked setting ε. A part of ``BudgetPage``
(desktop/wizard/budget_page.py), which builds the widgets it uses (``table``, ``table_box``, ``table_note``,
``epsilon``) and holds its state.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidgetItem

from core.run.planning import TABLE_BASIS
from desktop.budget_bands import band_for


class EpsilonTableSection:
    """The ε table's methods of ``BudgetPage``."""

    def refresh_table(self) -> None:
        """Ask core for the table (``core.run.planning.epsilon_table``) when anything but ε changed since it was drawn."""
        spec = self.controller.spec
        summary = self.controller.summary
        key = None if summary is None else (summary.fingerprint, summary.n_units, repr(_without_epsilon(spec)))
        if key == self._table_key:
            return
        self._table_key = key
        self.epsilon_table = self.controller.epsilon_table() if key is not None else None
        self._show_table()

    def table_rows(self) -> list[tuple[str, ...]]:
        """The table as shown, one tuple of cell texts per row (tests and screenshots)."""
        return [tuple(_cell(self.table.item(r, c)) for c in range(self.table.columnCount()))
                for r in range(self.table.rowCount())]

    def selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def pick_row(self, row: int) -> None:
        """Select a row, as a click does: its ε becomes this run's."""
        self.table.selectRow(row)

    def _show_table(self) -> None:
        table = self.epsilon_table
        self._syncing = True
        self.table.setRowCount(0)
        if table is None or not any(row.expected_topics is not None for row in table.rows):
            self.table_box.setVisible(False)
            self._syncing = False
            return
        self.table_box.setVisible(True)
        unit = self.controller.unit_word()
        self.table.setRowCount(len(table.rows))
        for r, row in enumerate(table.rows):
            band = band_for(row.epsilon, table.delta, unit)
            suggested = " (smallest that finds topics)" if row.epsilon == table.suggested else ""
            cells = (f"{row.epsilon:g}{suggested}", f"■ {row.headline}", row.topics_words(), row.documents_words())
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, row.epsilon)
                if c == 1:
                    item.setForeground(QColor(band.colour))
                    item.setData(Qt.ItemDataRole.UserRole + 1, band.name)
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + sum(self.table.rowHeight(r) for r in range(len(table.rows)))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth())
        self.table_note.setText(f"Computed {table.count_words()}, at δ = {table.delta:.2g}. {TABLE_BASIS} "
                                f"{table.suggestion_words()} Click a row to use its ε.")
        self._syncing = False
        self._select_row(self.epsilon.value())

    def _suggest_epsilon(self) -> None:
        """Select the smallest ε whose forecast holds topics, once per data and method, unless the officer chose ε
        or the spec came from a file: a suggestion she sees and confirms, never a decision of the run."""
        table, summary = self.epsilon_table, self.controller.summary
        if table is None or table.suggested is None or summary is None or self._officer_chose:
            return
        if not self.controller.suggest_defaults:
            return
        key = (summary.fingerprint, self.controller.spec.method)
        if key in self._suggested_for:
            return
        self._suggested_for.add(key)
        self._syncing = True
        self.epsilon.setValue(table.suggested)
        self._syncing = False

    def _select_row(self, epsilon: float) -> None:
        """Keep the table's selection on the row of this ε (none when ε is not in the table)."""
        self._syncing = True
        self.table.clearSelection()
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            if item is not None and abs(float(item.data(Qt.ItemDataRole.UserRole)) - epsilon) < 1e-9:
                self.table.selectRow(r)
        self._syncing = False

    def _row_picked(self) -> None:
        if self._syncing:
            return
        row = self.selected_row()
        if row is None:
            return
        item = self.table.item(row, 0)
        if item is None:
            return
        self._officer_chose = True
        self.epsilon.setValue(float(item.data(Qt.ItemDataRole.UserRole)))


def _cell(item: QTableWidgetItem | None) -> str:
    return "" if item is None else item.text()


def _without_epsilon(spec: Any) -> Any:
    """The spec's settings other than ε (what the ε table depends on), for telling when to redraw it."""
    from dataclasses import asdict

    settings = asdict(spec)
    settings.get("privacy", {}).pop("epsilon", None)
    settings.get("privacy", {}).pop("rationale", None)
    return settings
