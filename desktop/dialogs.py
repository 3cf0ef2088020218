"""Dialogs of the main window: verify a certificate, and settings (General; Budgets, the datasets' caps)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTabWidget,
    QVBoxLayout, QWidget,
)

from core.certificate.signing import export_public_key, load_signing_key, public_key_fingerprint
from core.common.errors import PrivetError
from desktop.budgets import BudgetsPanel
from desktop.controller import verify_folder
from desktop.settings import DesktopSettings


class VerifyDialog(QDialog):
    """Pick an export folder and the custodian's public key; check the signature, origin and file hashes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Verify a certificate")
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("An export folder (it contains certificate.json)")
        self.folder.setToolTip("The folder that was exported and shared")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        self.public_key = QLineEdit()
        self.public_key.setPlaceholderText("The custodian's public key (.pem), obtained from them directly")
        self.public_key.setToolTip("Only this key proves who signed: the key inside the folder can be replaced")
        browse_key = QPushButton("Choose &key…")
        browse_key.clicked.connect(self._browse_key)
        self.verify_button = QPushButton("&Verify")
        self.verify_button.setDefault(True)
        self.verify_button.clicked.connect(self.verify)
        self.result = QLabel()
        self.result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        row.addWidget(self.verify_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        key_row = QHBoxLayout()
        key_row.addWidget(QLabel("Custodian's public key:"))
        key_row.addWidget(self.public_key, 1)
        key_row.addWidget(browse_key)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(key_row)
        layout.addWidget(self.result)
        layout.addWidget(close)
        self.resize(620, 200)

    def verify(self) -> bool:
        folder = self.folder.text().strip()
        if not folder:
            self.result.setText("Choose an export folder first.")
            return False
        try:
            outcome = verify_folder(folder, self.public_key.text().strip() or None)
        except PrivetError as exc:
            self.result.setText(exc.user_message())
            return False
        if outcome.ok and self.public_key.text().strip():
            self.result.setText("<span style='color:#2e7d32'><b>✔ Verified.</b></span> Signed by the custodian's "
                                "public key you chose, and every file matches its recorded hash.")
        elif outcome.ok:
            self.result.setText("<span style='color:#e65100'><b>Files intact, origin NOT proven.</b></span> The "
                                "files match a certificate signed by the key inside the folder, which anyone can "
                                "replace. Choose the custodian's public key to prove who signed.")
        else:
            self.result.setText("<span style='color:#b71c1c'><b>✘ Not verified.</b></span><br>"
                                + "<br>".join(outcome.problems))
        return outcome.ok

    def _browse_key(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose the custodian's public key", "", "PEM key (*.pem)")
        if path:
            self.public_key.setText(path)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose an export folder")
        if path:
            self.folder.setText(path)


def keyring_status() -> str:
    """Where the signing key is kept and its fingerprint, in words."""
    try:
        key = load_signing_key()
    except PrivetError as exc:
        return exc.user_message()
    return f"{key.storage}; key fingerprint {public_key_fingerprint(key.public_key)}"


GENERAL, BUDGETS = "general", "budgets"


class SettingsDialog(QDialog):
    """General: models folder and the signing identity used on certificates, with the keyring status.
    Budgets: each dataset's spend and cap (``desktop.budgets``); a cap is set there, recorded at once."""

    def __init__(self, settings: DesktopSettings, parent: QWidget | None = None, page: str = GENERAL) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.settings = settings
        self.models_folder = QLineEdit(settings.models_folder)
        self.models_folder.setToolTip("Where you keep local Hugging Face folders and GGUF files")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        self.public_key = QLineEdit()
        self.public_key.setPlaceholderText("The custodian's public key (.pem), obtained from them directly")
        self.public_key.setToolTip("Only this key proves who signed: the key inside the folder can be replaced")
        browse_key = QPushButton("Choose &key…")
        browse_key.clicked.connect(self._browse_key)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.models_folder, 1)
        folder_row.addWidget(browse)
        self.custodian = QLineEdit(settings.custodian)
        self.custodian.setToolTip("Default custodian named on certificates")
        self.organisation = QLineEdit(settings.organisation)
        self.irb = QLineEdit(settings.irb_protocol)
        self.keyring = QLabel(keyring_status())
        self.keyring.setWordWrap(True)
        self.export_key_button = QPushButton("&Export public key…")
        self.export_key_button.setToolTip("Save the public key (public_key.pem) to give to the IRB or a reviewer: "
                                          "with it they can check that a release was signed by you")
        self.export_key_button.clicked.connect(self._export_key_clicked)
        self.export_key_result = QLabel()
        self.export_key_result.setWordWrap(True)
        form = QFormLayout()
        form.addRow("&Models folder:", folder_row)
        form.addRow("&Custodian:", self.custodian)
        form.addRow("&Organisation:", self.organisation)
        form.addRow("&IRB protocol:", self.irb)
        form.addRow("Signing key:", self.keyring)
        form.addRow("", self.export_key_button)
        form.addRow("", self.export_key_result)
        for widget in (self.custodian, self.organisation, self.irb):
            form.labelForField(widget).setBuddy(widget)
        form.labelForField(folder_row).setBuddy(self.models_folder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        general = QWidget()
        general_layout = QVBoxLayout(general)
        general_layout.addLayout(form)
        general_layout.addStretch(1)
        self.budgets = BudgetsPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(general, "&General")
        self.tabs.addTab(self.budgets, "&Budgets")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)
        self.show_page(page)
        self.resize(760, 760)  # Budgets: the table, the cap box and the runs table without squashing

    def show_page(self, page: str) -> None:
        """Show the General or the Budgets page (``GENERAL``, ``BUDGETS``)."""
        self.tabs.setCurrentWidget(self.budgets if page == BUDGETS else self.tabs.widget(0))

    def current_page(self) -> str:
        return BUDGETS if self.tabs.currentWidget() is self.budgets else GENERAL

    def accept(self) -> None:
        self.settings.models_folder = self.models_folder.text().strip()
        self.settings.custodian = self.custodian.text().strip()
        self.settings.organisation = self.organisation.text().strip()
        self.settings.irb_protocol = self.irb.text().strip()
        self.settings.save()
        self.settings.apply_to_environment()
        super().accept()

    def export_public_key(self, path: str | Path) -> bool:
        """Write the public key to ``path`` (``core.certificate.signing.export_public_key``) and say so."""
        try:
            fingerprint = export_public_key(Path(path))
        except (OSError, PrivetError) as exc:
            message = exc.user_message() if isinstance(exc, PrivetError) else (
                f"The public key could not be written to {path} ({exc.strerror or exc}). Choose another folder.")
            self.export_key_result.setText(message)
            return False
        self.export_key_result.setText(f"Public key written to {path} (fingerprint {fingerprint}). Give this file "
                                       "to the IRB together with the release folder.")
        return True

    def _export_key_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export public key", "public_key.pem", "PEM key (*.pem)")
        if path:
            self.export_public_key(path)

    def _browse_key(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose the custodian's public key", "", "PEM key (*.pem)")
        if path:
            self.public_key.setText(path)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose the models folder", self.models_folder.text())
        if path:
            self.models_folder.setText(path)
