"""Where topic names come from (docs/method.md §2.0, §2.1): shipped public lists and/or DP phrase discovery.

Shown on the Task page. It only relays choices into the run spec, through the chosen method's facts
(``MethodFacts.wizard_values`` and ``store_wizard_values``); the lists and their sizes come from
``core.methods.dp_synrag.vocab.vocabulary``. A shipped list that fits the task's and the columns' public words
(``core.methods.list_offer``: ICD-10-CM for clinical text) is ticked for a new run, with one line on
why it is free, until the officer ticks or unticks it herself.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from core.specs import method_catalogue
from core.specs.method_catalogue import WizardValues
from core.methods.list_offer import offered_lists
from core.methods.dp_synrag.vocab.vocabulary import shipped_domain_lists
from core.specs.runspec import RunSpec
from desktop.widgets.wrapped_check import wrapped_check

TRADE_OFF = ("A public word list costs no privacy budget but only knows its own terms; discovering the corpus's "
             "own phrases costs a share of the budget but also finds local names (a ward, a product, a new condition).")


class TopicNamesBox(QWidget):
    """Check boxes: each shipped public list, and DP phrase discovery."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        words = {info.name: f"{info.description} ({info.entries:,} entries)" for info in shipped_domain_lists()}
        self.lists = {name: QCheckBox() for name in words}
        self.discover = QCheckBox()
        self.discover.setToolTip("Each document proposes a few of its rarest phrases; only phrases many documents "
                                 "share are released, with noise. A phrase of one document alone is not released.")
        note = QLabel(TRADE_OFF)
        note.setWordWrap(True)
        self.offer = QLabel()  # why a list was ticked for her, and why it is free (empty: none offered)
        self.offer.setObjectName("list_offer")
        self.offer.setWordWrap(True)
        self.offer.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for name, box in self.lists.items():
            box.setToolTip("A public terminology added to the topic vocabulary; it costs no budget.")
            box.clicked.connect(lambda _checked, n=name: self._decided.add(n))  # her own choice stands
            layout.addWidget(wrapped_check(box, words[name]))  # wrapped: a list's long name never widens the page
        layout.addWidget(self.offer)
        layout.addWidget(wrapped_check(self.discover, "&Discover the corpus's own phrases (costs part of the budget)"))
        layout.addWidget(note)
        self._other: list[str] = []
        self._decided: set[str] = set()  # lists the officer ticked or unticked herself
        self._offered: set[str] = set()  # lists ticked by the offer (unticked again when it no longer fits)

    def load(self, spec: RunSpec) -> None:
        chosen = _values(spec)
        for name, box in self.lists.items():
            box.setChecked(name in chosen.domain_lists)
        self._other = [entry for entry in chosen.domain_lists if entry not in self.lists]  # lists given by path stay
        self.discover.setChecked(chosen.discover_phrases)
        self.setEnabled(_asks(spec))

    def suggest(self, public_words: list[str], allowed: bool = True) -> None:
        """Tick the shipped lists that fit these public words (the task, the column names; never the text) unless
        the officer decided on them; a list ticked by an earlier offer that no longer fits is unticked again.
        ``allowed``: False for a spec opened from a file or a resumed run (its lists stand)."""
        fits = {offer.name: offer for offer in offered_lists(public_words)} if allowed and self.isEnabled() else {}
        for name, box in self.lists.items():
            if name in self._decided:
                continue
            if name in fits and not box.isChecked():
                box.setChecked(True)
                self._offered.add(name)
            elif name not in fits and name in self._offered:
                box.setChecked(False)
                self._offered.discard(name)
        shown = [fits[name].words() for name in self._offered if name in fits and name not in self._decided]
        self.offer.setText(" ".join(shown))
        self.offer.setVisible(bool(shown))

    def store(self, spec: RunSpec) -> None:
        if not _asks(spec):
            return
        lists = tuple(self._other + [name for name, box in self.lists.items() if box.isChecked()])
        method_catalogue.facts(spec.method).store_wizard_values(
            spec, replace(_values(spec), domain_lists=lists, discover_phrases=self.discover.isChecked()))


def _values(spec: RunSpec) -> WizardValues:
    """The spec's topic names as the chosen method's facts read them (``core.specs.method_catalogue``)."""
    return method_catalogue.facts(spec.method).wizard_values(spec)


def _asks(spec: RunSpec) -> bool:
    """Whether the chosen method finds topic names (its wizard options, ``core.specs.method_catalogue``)."""
    return method_catalogue.facts(spec.method).wizard.topic_names
