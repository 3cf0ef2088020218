"""Step 5: the public task description, how many synthetic documents, output formats and identity."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
    QSpinBox, QVBoxLayout, QWidget,
)

from core.specs.document_forms import FORM_LABELS
from core.specs.dp_synrag import DOCUMENT_COUNT_CHOICES, MAX_DOCUMENTS, documents_setting_words
from desktop.controller import WizardController
from desktop.widgets.collapsible import Collapsible
from desktop.wizard.common import Page, scrolling_layouts, shrinkable
from desktop.wizard.topic_names import TopicNamesBox

FORMATS = ("jsonl", "csv")
FORMAT_NAMES = {"jsonl": "JSON Lines (one document per line)", "csv": "CSV (a spreadsheet)"}
MIN_TASK_CHARS = 10
FORM_CHOICES = tuple(FORM_LABELS.items())  # core.specs.document_forms: the one list of forms and their words
AS_MANY = 1  # the "This many:" choice; the number is the spin box's
COUNT_MODES = (*DOCUMENT_COUNT_CHOICES, ("This many:", AS_MANY))  # core's words for each choice


class TaskPage(Page):
    def __init__(self, controller: WizardController, default_identity: dict[str, str] | None = None) -> None:
        super().__init__(controller, "Task and output",
                         "The task description is public: it is used to keep only useful synthetic documents.")
        self.default_identity = default_identity or {}
        self.task = QPlainTextEdit()
        self.task.setTabChangesFocus(True)
        self.task.setFixedHeight(70)
        self.task.setToolTip("What the synthetic corpus will be used for. Do not put private details here.")
        self.count_mode = shrinkable(QComboBox())  # DP-SynRAG: [dp_synrag] documents (docs/method.md §6.2)
        for label, value in COUNT_MODES:
            self.count_mode.addItem(label, value)
        self.count_mode.setToolTip("How many synthetic documents DP-SynRAG writes. They are shared among the topics "
                                   "found in proportion to how often each is mentioned (a noisy count), so common "
                                   "topics get more documents. This costs no budget.")
        self.count = QSpinBox()
        self.count.setRange(0, MAX_DOCUMENTS)
        self.count.setSpecialValueText("Automatic (from the size of the data)")  # 0: the adaptive default chooses
        self.count.setToolTip("How many synthetic documents to write. Automatic: Privet chooses it from a noisy count "
                              "of how many people the data hold.")
        self.count_note = QLabel()
        self.count_note.setWordWrap(True)
        self.formats = {name: QCheckBox(FORMAT_NAMES[name]) for name in FORMATS}
        fmt_row = QHBoxLayout()
        for box in self.formats.values():
            box.setToolTip("Formats of the synthetic corpus in the export folder")
            fmt_row.addWidget(box)
        fmt_row.addStretch(1)
        self.folder = QLineEdit()
        self.folder.setToolTip("Where the export folder goes (you can change it when exporting)")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(browse)
        self.form = shrinkable(QComboBox())
        for name, label in FORM_CHOICES:
            self.form.addItem(label, name)
        self.form.setToolTip("The kind of document the corpus holds. The public writer turns each released topic "
                             "into a document of this form; the example is printed in the certificate.")
        self.example = QPlainTextEdit()
        self.example.setTabChangesFocus(True)
        self.example.setFixedHeight(56)
        self.example.setPlaceholderText("Or type an INVENTED example, with placeholders in square brackets, e.g. "
                                        "Consultation note. [name], [age], reports [symptoms]. Impression: "
                                        "[condition]. Plan: [treatment].")
        self.example.setToolTip("Never paste a real document: the example is shown to the public model and printed "
                                "in the certificate. It is checked against the loaded corpus.")
        self.custodian = QLineEdit()
        self.custodian.setToolTip("The person responsible for the data; written into the certificate")
        self.organisation = QLineEdit()
        self.irb = QLineEdit()
        self.irb.setToolTip("Ethics / IRB protocol number, if any")

        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow screen: labels above their fields
        form.addRow("&Task description:", self.task)
        count_row = QVBoxLayout()  # the choice above the number: each choice's words show whole on a laptop screen
        count_row.addWidget(self.count_mode)
        count_row.addWidget(self.count)
        form.addRow("&Number of synthetic documents:", count_row)
        form.addRow("", self.count_note)
        self.topic_names = TopicNamesBox()
        form.addRow("Topic names from:", self.topic_names)
        form.addRow("Document &form:", self.form)
        form.addRow("Invented &example:", self.example)
        form.addRow("Output formats:", fmt_row)
        form.addRow("Export &folder:", folder_row)
        form.addRow("&Custodian:", self.custodian)
        form.addRow("&Organisation:", self.organisation)
        form.addRow("&IRB protocol:", self.irb)
        for widget in (self.task, self.form, self.example, self.custodian, self.organisation, self.irb):
            form.labelForField(widget).setBuddy(widget)
        form.labelForField(count_row).setBuddy(self.count_mode)
        form.labelForField(folder_row).setBuddy(self.folder)

        self.tokens = QSpinBox()
        self.tokens.setRange(1, 2000)
        self.tokens.setToolTip("Tokens (word pieces) written per synthetic document (T in the certificate). More "
                               "tokens: longer documents, and the same ε is spread over more tokens (each is noisier).")
        self.cluster_size = QSpinBox()
        self.cluster_size.setRange(0, 100_000)
        self.cluster_size.setSpecialValueText("Automatic")  # 0: the adaptive default chooses
        self.cluster_size.setToolTip("How many private documents are used to write each synthetic document (k in "
                                     "the certificate). More: less noise per document, fewer distinct topics.")
        self.self_filter = QCheckBox("&Keep only useful documents")
        self.self_filter.setToolTip("Post-processing of the synthetic text; costs no budget. Needs a capable model.")
        advanced_body = QWidget()
        advanced = QFormLayout(advanced_body)
        advanced.addRow("&Length of each document (tokens):", self.tokens)
        advanced.addRow("", _note("A token is a word or a piece of one. Longer documents spread the same budget over "
                                  "more tokens, so each is noisier."))
        advanced.addRow("Private documents per &topic:", self.cluster_size)
        advanced.addRow("", _note("Private documents behind each synthetic one: more means less noise per "
                                  "document but fewer distinct topics."))
        advanced.addRow("", self.self_filter)
        advanced.addRow("", _note("The model reads each synthetic document and drops those it judges not useful for "
                                  "the task."))
        for widget in (self.tokens, self.cluster_size):
            advanced.labelForField(widget).setBuddy(widget)
        self.advanced = Collapsible("Advanced", advanced_body)

        layout, outer = scrolling_layouts(self)  # with Advanced open the page is taller than the wizard
        layout.addLayout(form)
        layout.addWidget(self.advanced)
        layout.addStretch(1)
        outer.addWidget(self.message)
        self.task.textChanged.connect(self.completeChanged.emit)
        self.task.textChanged.connect(self._offer_lists)
        self.example.textChanged.connect(self.completeChanged.emit)
        self.form.currentIndexChanged.connect(lambda *_: self.completeChanged.emit())
        self.count_mode.currentIndexChanged.connect(lambda *_: self._count_changed())
        self.count.valueChanged.connect(self._count_value_changed)
        for box in self.formats.values():
            box.toggled.connect(lambda *_: self.completeChanged.emit())

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        spec = self.controller.spec
        self.task.setPlainText(spec.task)
        options = self.controller.wizard_options()  # what the method asks for (its package's facts)
        topics = options.documents == "topics"
        own = self.controller.wizard_section()  # where the count, tokens and self-filter are stored
        values = self.controller.wizard_values()  # how many documents, k, the form: as the method's facts read them
        documents = values.documents
        self.count_mode.blockSignals(True)
        self.count.blockSignals(True)
        self.count_mode.setCurrentIndex(max(self.count_mode.findData(min(documents, AS_MANY)), 0))
        self.count.setValue(documents if topics and documents > 0 else own.R if not topics else 0)
        self.count_mode.blockSignals(False)
        self.count.blockSignals(False)
        self.count_mode.setVisible(topics)
        self.count_mode.setEnabled(topics and not values.token_stage)  # a token stage: one per topic
        self.count.setEnabled(options.documents in ("number", "topics")
                              and (not topics or self.count_mode.currentData() == AS_MANY))
        self.tokens.setValue(own.T)
        self.cluster_size.setValue(values.k)
        self.self_filter.setChecked(own.self_filter)
        self.topic_names.load(spec)
        self._offer_lists()
        self.advanced.setVisible(options.writes_tokens)
        self.cluster_size.setEnabled(options.cluster_size)
        self.self_filter.setEnabled(options.self_filter)
        self.count_note.setText(self.count_words())
        index = self.form.findData(values.document_form)
        self.form.setCurrentIndex(max(index, 0))
        self.example.setPlainText(values.public_example)
        for widget in (self.form, self.example):
            widget.setEnabled(options.document_form)
        for name, box in self.formats.items():
            box.setChecked(name in spec.output.formats)
        self.folder.setText(spec.output.folder)
        out = spec.output
        self.custodian.setText(out.custodian or self.default_identity.get("custodian", ""))
        self.organisation.setText(out.organisation or self.default_identity.get("organisation", ""))
        self.irb.setText(out.irb_protocol or self.default_identity.get("irb_protocol", ""))

    def is_instruction(self, problem: str) -> bool:
        return problem.startswith(("Describe the task", "Choose at least"))

    def count_words(self) -> str:
        """The note under the number of documents, with core's one figure for how many units a topic needs."""
        options = self.controller.wizard_options()
        if options.documents != "topics":
            return options.count_note
        units = self.controller.topic_units()
        need = (f"at this ε a topic must be mentioned by about {units:.0f} or more people or documents to be found"
                if units is not None else "a topic must be mentioned by many people or documents to be found")
        expected = self.controller.documents_range()
        documents = self.controller.wizard_values().documents
        outlook = (f" Expected: {expected[0]} to {expected[1]} documents"
                   + (" (the range is wide because how often the documents share words is not looked at before "
                      "the run)." if not documents else ".") if expected else "")
        if documents == 0:
            return f"One document per topic, so fewer come out when few topics are well supported: {need}.{outlook}"
        how_many = documents_setting_words(documents)
        how_many = how_many[0].upper() + how_many[1:]
        return (f"{how_many}, shared among the topics found in proportion to how often each is mentioned, so common "
                f"topics get more; {need}.{outlook}")

    def blocking_message(self) -> str:
        if len(self.task.toPlainText().strip()) < MIN_TASK_CHARS:
            return f"Describe the task in at least {MIN_TASK_CHARS} characters."
        if not any(box.isChecked() for box in self.formats.values()):
            return "Choose at least one output format."
        if self.controller.wizard_options().document_form:
            problem = self.controller.example_problem(self.form.currentData() or "", self.example.toPlainText())
            if problem:
                return (f"The example of the document form looks like a real document: {problem}. Type an invented "
                        "example with placeholders in square brackets, or pick a shipped form.")
        return ""

    def store(self) -> None:
        spec = self.controller.spec
        spec.task = self.task.toPlainText().strip()
        options = self.controller.wizard_options()
        own = self.controller.wizard_section()  # [dp_synrag], or the method's own section (DP-Synth's [dp_synth])
        if options.documents == "number":  # the methods without topics write R documents
            own.R = self.count.value()
        if options.writes_tokens:
            own.T = self.tokens.value()
            own.self_filter = self.self_filter.isChecked()
        changes: dict[str, Any] = {}  # the shape settings the method asks for, stored where its facts keep them
        if options.documents == "topics":
            changes["documents"] = self._documents()
        if options.cluster_size:
            changes["k"] = self.cluster_size.value()
        if options.document_form:
            changes["document_form"] = self.form.currentData() or ""
            changes["public_example"] = self.example.toPlainText().strip()
        if changes:
            self.controller.store_wizard_values(replace(self.controller.wizard_values(), **changes))
        self.topic_names.store(spec)
        spec.output.formats = [name for name, box in self.formats.items() if box.isChecked()]
        spec.output.folder = self.folder.text().strip()
        spec.output.custodian = self.custodian.text().strip()
        spec.output.organisation = self.organisation.text().strip()
        spec.output.irb_protocol = self.irb.text().strip()

    def _documents(self) -> int:
        """How many documents (``WizardValues.documents``; DP-SynRAG's ``[dp_synrag] documents``) as the controls
        say: -2 (automatic), 0 (one per topic), -1 (about the data's size) or N."""
        mode = self.count_mode.currentData()
        return self.count.value() if mode == AS_MANY else int(mode)

    def _count_changed(self) -> None:
        """The way of counting documents changed: the number is asked for only with "This many"."""
        self.count.setEnabled(self.count_mode.currentData() == AS_MANY)
        if self.controller.wizard_options().documents == "topics":
            self.controller.store_wizard_values(replace(self.controller.wizard_values(), documents=self._documents()))
            self.count_note.setText(self.count_words())

    def _count_value_changed(self, value: int) -> None:
        if self.controller.wizard_options().documents != "topics":
            return
        if value > 0 and self.count_mode.currentData() != AS_MANY:
            self.count_mode.setCurrentIndex(self.count_mode.findData(AS_MANY))  # a number typed: this many
        else:
            self._count_changed()

    def _offer_lists(self) -> None:
        """Tick a public list that fits the task and the column names (``core.methods.list_offer``)."""
        from core.methods.list_offer import public_words

        words = public_words(self.controller.spec, self.task.toPlainText())
        self.topic_names.suggest(words, self.controller.suggest_defaults)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose where to export")
        if path:
            self.folder.setText(path)


def _note(text: str) -> QLabel:
    """A one-line description under an advanced setting."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: #546e7a;")
    return label
