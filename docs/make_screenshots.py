"""Screenshots of every wizard page, the main window and its dialogs, taken offscreen from the real widgets.

    QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py [--model tiny|default] [--out docs/screenshots]

The wizard opens the demo run spec (the invented clinic corpus) and really runs it in a child
process, as the application does. ``--model tiny`` (the default, about 4 minutes on 2 cores) uses the tiny
random test models, so the preview texts are nonsense; ``--model default`` uses the packaged
SmolLM2 and MiniLM (several minutes). Everything happens in a temporary Privet data folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SIZE = (960, 760)
RUN_TIMEOUT_S = 1800


def wait_until(app, condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the run did not finish in time")
        app.processEvents()
        time.sleep(0.02)


def grab(widget, out: Path, name: str, app) -> None:
    for _ in range(5):
        app.processEvents()
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("tiny", "default"), default="tiny")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="privet-screens-")
    os.environ["PRIVET_HOME"] = home
    os.environ.setdefault("PRIVET_KEYRING", "memory")

    from PySide6.QtWidgets import QApplication

    from core.models.base import ModelChoice
    from desktop.app import demo_spec_path
    from desktop.main_window import MainWindow
    from desktop.settings import DesktopSettings

    app = QApplication.instance() or QApplication([])
    window = MainWindow(DesktopSettings(custodian="Demo custodian", organisation="Privet demo clinic"))
    window.resize(*SIZE)
    wizard = window.new_run(demo_spec_path())
    wizard.resize(*SIZE)
    spec = wizard.controller.spec
    if args.model == "tiny":
        spec.llm = ModelChoice(source="tiny-random")
        spec.embedder = ModelChoice(source="tiny-random")
        spec.dp_synrag.T = 12
        spec.dp_synrag.self_filter = False
    grab(wizard, args.out, "01-data", app)
    wizard.next()
    grab(wizard, args.out, "02-method", app)
    wizard.next()
    wizard.budget_page.advanced.set_expanded(True)
    grab(wizard, args.out, "03-budget", app)
    wizard.next()
    grab(wizard, args.out, "04-model", app)
    wizard.next()
    grab(wizard, args.out, "05-task", app)
    wizard.next()
    wizard.confirm_page.understood.setChecked(True)
    grab(wizard, args.out, "06-confirm", app)
    wizard.next()
    run = wizard.run_page
    wait_until(app, lambda: len(run.charged) >= 2 or run.state != "running", RUN_TIMEOUT_S)
    grab(wizard, args.out, "07-run", app)
    wait_until(app, lambda: run.state != "running", RUN_TIMEOUT_S)
    if run.state != "succeeded":
        print(f"the run ended: {run.state}: {run.message.text()}", file=sys.stderr)
        grab(wizard, args.out, "07-run-ended", app)
        return 1
    grab(wizard, args.out, "07-run-finished", app)
    wizard.next()
    review = wizard.review_page
    review.out_dir.setText(str(Path(home) / "export" / "demo-release"))
    exported = review.export()
    grab(wizard, args.out, "08-review-export", app)

    window.refresh()
    grab(window, args.out, "00-main-window", app)
    verify = window.show_verify()
    verify.folder.setText(str(exported or ""))
    verify.verify()
    grab(verify, args.out, "09-verify-dialog", app)
    settings = window.show_settings()
    grab(settings, args.out, "10-settings", app)
    wizard.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
