"""Where topic names come from (docs/method.md §2.0, §2.1): shipped public lists and/or DP phrase discovery.

Shown on the Task page. It only relays choices into the run spec, through the chosen method's facts
(``MethodFacts.wizard_values`` and ``store_wizard_values``); the lists and their sizes come from
``core.methods.dp_synrag.vocabulary``.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from core import method_catalogue
from core.method_catalogue import WizardValues
from core.methods.dp_synrag.vocabulary import shipped_domain_lists
from core.runspec import RunSpec

TRADE_OFF = ("A public word list costs no privacy budget but only knows its own terms; discovering the corpus's "
             "own phrases costs a share of the budget but also finds local names (a ward, a product, a new condition).")


class TopicNamesBox(QWidget):
    """Check boxes: each shipped public list, and DP phrase discovery."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lists = {info.name: QCheckBox(f"{info.description} ({info.entries:,} entries)")
                      for info in shipped_domain_lists()}
        self.discover = QCheckBox("&Discover the corpus's own phrases (costs part of the budget)")
        self.discover.setToolTip("Each document proposes a few of its rarest phrases; only phrases many documents "
                                 "share are released, with noise. A phrase of one document alone is not released.")
        note = QLabel(TRADE_OFF)
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for box in self.lists.values():
            box.setToolTip("A public terminology added to the topic vocabulary; it costs no budget.")
            layout.addWidget(box)
        layout.addWidget(self.discover)
        layout.addWidget(note)
        self._other: list[str] = []

    def load(self, spec: RunSpec) -> None:
        chosen = _values(spec)
        for name, box in self.lists.items():
            box.setChecked(name in chosen.domain_lists)
        self._other = [entry for entry in chosen.domain_lists if entry not in self.lists]  # lists given by path stay
        self.discover.setChecked(chosen.discover_phrases)
        self.setEnabled(_asks(spec))

    def store(self, spec: RunSpec) -> None:
        if not _asks(spec):
            return
        lists = tuple(self._other + [name for name, box in self.lists.items() if box.isChecked()])
        method_catalogue.facts(spec.method).store_wizard_values(
            spec, replace(_values(spec), domain_lists=lists, discover_phrases=self.discover.isChecked()))


def _values(spec: RunSpec) -> WizardValues:
    """The spec's topic names as the chosen method's facts read them (``core.method_catalogue``)."""
    return method_catalogue.facts(spec.method).wizard_values(spec)


def _asks(spec: RunSpec) -> bool:
    """Whether the chosen method finds topic names (its wizard options, ``core.method_catalogue``)."""
    return method_catalogue.facts(spec.method).wizard.topic_names
