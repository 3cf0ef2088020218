"""Screenshots of every wizard page, the main window and its dialogs, taken offscreen from the real widgets.

    QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py [--model default|tiny] [--out docs/screenshots]
    QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py --from-run PRIVET_HOME/runs/RUN_ID
    QT_QPA_PLATFORM=offscreen QT_SCALE_FACTOR=1.25 python docs/make_screenshots.py --data FILE --size 1093x554 \
        --out docs/screenshots/defaults-laptop        # what `make screenshots-laptop` runs

Three ways, all with the real widgets:

* ``--model default`` (the default): the wizard opens the demo run spec (the invented clinic corpus) and
  really runs it with the packaged SmolLM2 and MiniLM in a child process, as the application does
  (the demo's time on 2 CPU cores; see README). Every page, including the live run, is real.
* ``--from-run RUN_DIR``: pages from a run that already finished with the packaged model, e.g. one made by
  ``PRIVET_HOME=/tmp/h privet run resources/demo/demo_run.toml``. Its Privet data folder (the run folder's
  grandparent: ledger, runs) is copied to a temporary folder first and left untouched. Nothing is run, so
  the live-run screenshot (07-run.png) is not taken; the finished run, review and export pages show the
  real synthetic corpus.
* ``--data FILE [--task TEXT] [--epsilon E]``: a new run as a custodian starts one, with every default: the wizard
  opens empty, FILE is chosen on the Private data page (the columns it suggests are kept), TEXT (if given) is typed as
  the task and E as ε, and nothing else is touched; the run is live, with the packaged models. For example, on a clinic
  file that is not the demo's: ``privet demo-data --patients 200 --seed 7 D``, then
  ``--data D/notes.csv --task "…" --out docs/screenshots/defaults-200``.
* ``--model tiny``: the tiny random test models (a quick check of the script; texts are nonsense).

``--size WxH`` is the window's size in logical pixels (default 960x760). A laptop screen of 1366 × 768 at 125 %
scaling is 1093 × 614 logical pixels, 1093 × 554 without its taskbar and title bar: with ``QT_SCALE_FACTOR=1.25``
the pictures are then 1366 × 692 pixels, what that screen shows (``make screenshots-laptop``: every default on
``privet demo-data --patients 200 --seed 23``, into docs/screenshots/defaults-laptop/). A page taller than the
window scrolls up and down; its lower part is saved as well (``NN-page-end.png``).

Everything is written in a temporary Privet data folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
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
RUN_TIMEOUT_S = 3600


def wait_until(app, condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the run did not finish in time")
        app.processEvents()
        time.sleep(0.02)


def grab(widget, out: Path, name: str, app) -> None:
    """``name.png``; for a wizard page that scrolls (a small window), also its end, ``name-end.png``."""
    from PySide6.QtWidgets import QScrollArea, QWizard

    for _ in range(5):
        app.processEvents()
    path = out / f"{name}.png"
    widget.grab().save(str(path))
    print(f"wrote {path}")
    page = widget.currentPage() if isinstance(widget, QWizard) else None
    areas = [a for a in (page.findChildren(QScrollArea) if page is not None else []) if a.isVisible()]
    tall = [a for a in areas if a.verticalScrollBar().maximum() > 0 and a.widget() is not None
            and a.widget().parentWidget() is a.viewport()]  # the page's own scroll area, not a list inside it
    if tall:
        bar = tall[0].verticalScrollBar()
        bar.setValue(bar.maximum())
        for _ in range(5):
            app.processEvents()
        end = out / f"{name}-end.png"
        widget.grab().save(str(end))
        print(f"wrote {end}")
        bar.setValue(0)
        for _ in range(3):
            app.processEvents()


def certificate_pages(pdf: Path, out: Path) -> None:
    """Pages 1-2 of the exported certificate as certificate-p1.png and -p2.png (needs pdftoppm: poppler-utils)."""
    if not pdf.is_file() or shutil.which("pdftoppm") is None:
        print("no certificate pages: pdftoppm (poppler-utils) is not installed", file=sys.stderr)
        return
    subprocess.run(["pdftoppm", "-r", "110", "-png", "-f", "1", "-l", "2", str(pdf), str(out / "certificate-p")],
                   check=True)
    for number in (1, 2):  # pdftoppm names them certificate-p-1.png (or -01 for longer documents)
        for candidate in (out / f"certificate-p-{number}.png", out / f"certificate-p-0{number}.png"):
            if candidate.is_file():
                candidate.replace(out / f"certificate-p{number}.png")


def carry_high_water(source_home: Path, copy_home: Path) -> None:
    """The copied data folder is the same ledger: give its copy the source's high-water mark (kept outside
    the data folder, by ledger path; core/ledger/highwater.py), else the copy reads as a restored folder."""
    from core.ledger import highwater

    source_state = source_home.parent / f".{source_home.name}.privet-state"
    highwater.carry_mark(source_home / "ledger.db", source_state, copy_home / "ledger.db")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("tiny", "default"), default="default")
    parser.add_argument("--from-run", type=Path, default=None, metavar="RUN_DIR",
                        help="a finished run folder (PRIVET_HOME/runs/RUN_ID) to show instead of running")
    parser.add_argument("--data", type=Path, default=None, metavar="FILE",
                        help="start a new run on FILE with every default instead of opening the demo spec")
    parser.add_argument("--epsilon", type=float, default=None, help="with --data: the ε typed on the Budget page")
    parser.add_argument("--task", default="", help="with --data: the task description typed on the Task page")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", metavar="WxH",
                        help="the window's size in logical pixels (1093x554: a 1366×768 laptop at 125 %%, with "
                             "QT_SCALE_FACTOR=1.25)")
    args = parser.parse_args()
    if args.data is not None and args.from_run is not None:
        parser.error("--data cannot be combined with --from-run")
    try:
        size = tuple(int(part) for part in args.size.lower().split("x"))
        assert len(size) == 2 and min(size) > 0
    except (ValueError, AssertionError):
        parser.error(f"--size must be WIDTHxHEIGHT, e.g. 1093x554 (got {args.size!r})")
    args.out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="privet-screens-")
    run_dir = None
    if args.from_run is not None:
        source = args.from_run.resolve()
        if not (source / "synthetic.jsonl").is_file() or not (source / "run.json").is_file():
            print(f"{source} is not a finished run folder (run.json and synthetic.jsonl are needed)", file=sys.stderr)
            return 2
        shutil.copytree(source.parents[1], home, dirs_exist_ok=True)
        run_dir = Path(home) / "runs" / source.name
    os.environ["PRIVET_HOME"] = home
    os.environ.setdefault("PRIVET_KEYRING", "memory")
    if args.from_run is not None:
        carry_high_water(args.from_run.resolve().parents[1], Path(home))

    from PySide6.QtWidgets import QApplication

    from core.specs.runspec import ModelChoice
    from desktop.app import demo_spec_path
    from desktop.controller import WizardController
    from desktop.main_window import MainWindow
    from desktop.settings import DesktopSettings

    app = QApplication.instance() or QApplication([])
    window = MainWindow(DesktopSettings(custodian="Demo custodian", organisation="Privet demo clinic"))
    window.resize(*size)
    if run_dir is not None:
        wizard = window._open_wizard(WizardController.for_run(run_dir))
        wizard.show()
    elif args.data is not None:
        wizard = window.new_run()  # every default, as a custodian's new run starts
        wizard.data_page.path.setText(str(args.data.resolve()))
        wizard.data_page._path_changed()  # as when the custodian leaves the field: the suggested columns
        if not wizard.data_page.load():
            print(f"the data did not load: {wizard.data_page.message.text()}", file=sys.stderr)
            return 1
    else:
        wizard = window.new_run(demo_spec_path())
    wizard.resize(*size)
    spec = wizard.controller.spec
    if args.model == "tiny" and run_dir is None:
        spec.llm = ModelChoice(source="tiny-random")
        spec.embedder = ModelChoice(source="tiny-random")
        spec.dp_synrag.T = 12
        spec.dp_synrag.self_filter = False
    grab(wizard, args.out, "01-data", app)
    wizard.next()
    grab(wizard, args.out, "02-method", app)
    wizard.next()
    if args.epsilon is not None:
        wizard.budget_page.set_epsilon(args.epsilon)
        wizard.budget_page.refresh_plan()
    wizard.budget_page.advanced.set_expanded(True)
    grab(wizard, args.out, "03-budget", app)
    wizard.next()
    grab(wizard, args.out, "04-model", app)
    wizard.next()
    if args.data is not None and args.task:
        wizard.task_page.task.setPlainText(args.task)
    grab(wizard, args.out, "05-task", app)
    wizard.next()
    wizard.confirm_page.understood.setChecked(True)
    grab(wizard, args.out, "06-confirm", app)
    run = wizard.run_page
    if run_dir is not None:
        n_synthetic = sum(1 for line in (run_dir / "synthetic.jsonl").open(encoding="utf-8") if line.strip())
        run.show_finished(run_dir, n_synthetic)
        wizard.next()
    else:
        wizard.next()
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
    # outside the Privet data folder: a release is never written inside it (core.run.export.refuse_protected_output)
    review.out_dir.setText(str(Path(tempfile.mkdtemp(prefix="privet-screens-export-")) / "demo-release"))
    review.ask_about_small_release = lambda problem: True  # the question's own dialog is not part of the pictures
    exported = review.export()
    grab(wizard, args.out, "08-review-export", app)
    if exported is not None:
        certificate_pages(exported / "certificate.pdf", args.out)

    window.refresh()
    grab(window, args.out, "00-main-window", app)
    verify = window.show_verify()
    verify.folder.setText(str(exported or ""))
    verify.verify()
    grab(verify, args.out, "09-verify-dialog", app)
    settings = window.show_settings()
    grab(settings, args.out, "10-settings", app)
    settings.show_page("budgets")  # Settings → Budgets: each dataset's spend, its cap, and a cap refused
    budgets = settings.budgets
    if budgets.datasets():
        budgets.table.selectRow(0)
        budgets.set_cap(1.0, 1e-6)  # below what the demo run spent: refused, with the spent figure
    grab(settings, args.out, "11-settings-budgets-refused", app)
    wizard.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
