"""Step 4: which language model, which device, and what the run will cost in time and memory."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
    QLineEdit, QPushButton, QRadioButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
)

from core.common.errors import PrivetError
from desktop.controller import WizardController
from desktop.hardware import GpuInfo, detect_gpus
from desktop.wizard.common import Page

SOURCES = (
    ("default", "&Packaged model (SmolLM2-135M-Instruct, runs on any computer)"),
    ("hf", "A local &Hugging Face model folder"),
    ("gguf", "A local &GGUF file (llama.cpp)"),
    ("tiny-random", "Tiny random test model (for testing Privet only; produces nonsense)"),
)


class ModelPage(Page):
    def __init__(self, controller: WizardController, gpus: list[GpuInfo] | None = None) -> None:
        super().__init__(controller, "Model and hardware",
                         "The language model runs on this computer; nothing is sent anywhere.")
        self.gpus = detect_gpus() if gpus is None else gpus
        self.models: list[dict] = []
        self.group = QButtonGroup(self)
        self.sources: dict[str, QRadioButton] = {}
        box = QGroupBox("Language model")
        box_layout = QVBoxLayout(box)
        for key, label in SOURCES:
            button = QRadioButton(label)
            self.group.addButton(button)
            self.sources[key] = button
            box_layout.addWidget(button)
        self.sources["tiny-random"].setVisible(False)
        self.sources["hf"].setToolTip("A folder with config.json and the weights, e.g. downloaded earlier")
        self.sources["gguf"].setToolTip("A .gguf file; needs llama-cpp-python")
        self.model_path = QLineEdit()
        self.model_path.setPlaceholderText("Folder or .gguf file")
        self.model_path.setToolTip("Where the model is on this computer")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.model_path, 1)
        path_row.addWidget(browse)
        box_layout.addLayout(path_row)
        self.local_models = QTableWidget(0, len(MODEL_COLUMNS))
        self.local_models.setHorizontalHeaderLabels([title for title, _ in MODEL_COLUMNS])
        self.local_models.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.local_models.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.local_models.verticalHeader().setVisible(False)
        self.local_models.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.local_models.horizontalHeader().setStretchLastSection(True)
        self.local_models.setMaximumHeight(130)
        self.local_models.setToolTip("Models already on this computer. Select one to use it.")
        self.local_models.cellDoubleClicked.connect(self._use_listed_model)
        box_layout.addWidget(QLabel("Models already on this computer:"))
        box_layout.addWidget(self.local_models)

        self.device = QComboBox()
        self.device.setToolTip("Where the model runs. Automatic uses a GPU when one is available.")
        self.device.addItem("Automatic", "auto")
        self.device.addItem("CPU", "cpu")
        for gpu in self.gpus:
            self.device.addItem(f"CUDA — {gpu.label()}", f"cuda:{gpu.index}")
        self.hardware = QLabel(
            "\n".join(g.label() for g in self.gpus) if self.gpus else "No NVIDIA GPU detected: the run uses the CPU.")
        self.estimate = QLabel()
        self.estimate.setWordWrap(True)
        form = QFormLayout()
        form.addRow("&Device:", self.device)
        form.labelForField(self.device).setBuddy(self.device)
        form.addRow("Detected:", self.hardware)
        form.addRow("Estimate:", self.estimate)

        layout = QVBoxLayout(self)
        layout.addWidget(box)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addWidget(self.message)
        self.group.buttonToggled.connect(lambda *_: self._changed())
        self.model_path.textChanged.connect(lambda *_: self._changed())
        self.device.currentIndexChanged.connect(lambda *_: self._changed())

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        llm = self.controller.spec.llm
        self.sources["tiny-random"].setVisible(llm.source == "tiny-random")
        self.sources.get(llm.source, self.sources["default"]).setChecked(True)
        self.model_path.setText(llm.path)
        index = self.device.findData(llm.device)
        self.device.setCurrentIndex(index if index >= 0 else 0)
        self.models = [m for m in self.controller.local_models() if isinstance(m, dict)]
        self.local_models.setRowCount(len(self.models))
        for row, model in enumerate(self.models):
            for col, (_, render) in enumerate(MODEL_COLUMNS):
                self.local_models.setItem(row, col, QTableWidgetItem(render(model)))
        self.update_estimate()

    def source(self) -> str:
        return next((k for k, b in self.sources.items() if b.isChecked()), "default")

    def select_source(self, key: str, path: str = "") -> None:
        self.sources[key].setVisible(True)
        self.sources[key].setChecked(True)
        self.model_path.setText(path)

    def blocking_message(self) -> str:
        source = self.source()
        path = Path(self.model_path.text().strip()).expanduser()
        if source == "hf" and not (path.is_dir() and (path / "config.json").is_file()):
            return "Choose a Hugging Face model folder (it must contain config.json)."
        if source == "gguf" and not (path.is_file() and path.suffix.lower() == ".gguf"):
            return "Choose an existing .gguf file."
        return ""

    def store(self) -> None:
        self._write_spec()

    def _write_spec(self) -> None:
        spec = self.controller.spec
        source = self.source()
        path = self.model_path.text().strip() if source in ("hf", "gguf") else ""
        device = self.device.currentData()
        spec.llm = replace(spec.llm, source=source, path=path, device=device)
        spec.embedder = replace(spec.embedder, device=device)

    def _changed(self) -> None:
        self.model_path.setEnabled(self.source() in ("hf", "gguf"))
        self.completeChanged.emit()

    def update_estimate(self) -> None:
        if self.blocking_message():
            self.estimate.setText("")
            return
        self._write_spec()
        try:
            plan = self.controller.plan()
        except PrivetError as exc:
            self.estimate.setText(exc.what)
            return
        # No time here: it depends on the Task page's settings (documents, tokens), not chosen yet. The Confirm
        # page shows it once everything that drives it is known.
        memory = (f"About {plan.estimate_memory_mb / 1024:.1f} GiB of memory for {plan.n_units} units. "
                  if plan.estimate_memory_mb is not None else "")
        self.estimate.setText(memory + "The time the run takes is shown on the Confirm page, once the task "
                              "settings that drive it are chosen.")

    def _use_listed_model(self, row: int, _column: int = 0) -> None:
        """Double-click on a listed language model: use it."""
        model = self.models[row] if 0 <= row < len(self.models) else None
        if model is None or model.get("kind") != "llm":
            return
        if model.get("packaged"):
            self.sources["default"].setChecked(True)
            return
        path = str(model.get("path", ""))
        self.select_source("gguf" if path.lower().endswith(".gguf") else "hf", path)

    def _browse(self) -> None:
        if self.source() == "gguf":
            path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF file", "", "GGUF (*.gguf)")
        else:
            path = QFileDialog.getExistingDirectory(self, "Choose a model folder")
        if path:
            self.model_path.setText(path)


def _size(model: dict) -> str:
    size = model.get("size")
    if not isinstance(size, (int, float)) or size <= 0:
        return "—"
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


MODEL_COLUMNS = (
    ("Name", lambda m: str(m.get("name", ""))),
    ("Kind", lambda m: {"llm": "language model", "embedder": "embedder"}.get(str(m.get("kind")), str(m.get("kind", "")))),
    ("Size", _size),
    ("Where", lambda m: ("packaged with Privet — " if m.get("packaged") else "") + str(m.get("path", ""))),
)
