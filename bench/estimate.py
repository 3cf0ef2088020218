"""How honest is the time estimate? Estimate ÷ actual for a sequence of real runs on this computer.

Each case is a full ``privet run`` (``core.run.pipeline.run_pipeline``, no export) in a throw-away data folder
(``PRIVET_HOME``), so the ledger and the speed calibration start empty and only this bench's runs feed
them, in order: a case is estimated with what the cases before it measured (``core.run.estimate``: the
per-stage calibration the desktop's child process also saves), exactly as a custodian's next run would be.
For every case the table gives the estimate before the run, the actual wall time, their ratio, and the
time left the run-time tracker (``EtaTracker``, what the Run page shows) predicted when half of the
actual time had passed, against the true remainder.

    python bench/estimate.py --cases tiny-120,tiny-600,smol-200,demo --json-out docs/bench/estimate.json

Cases: ``demo`` is resources/demo/demo_run.toml as shipped (packaged SmolLM2-135M and MiniLM on the CPU);
``smol-N`` the same spec and models on the first N notes of the demo corpus; ``tiny-N`` the same on the
first N notes with the tiny random test models (fast; their speed is not the packaged model's, and they are
calibrated separately, so they show how far one run's calibration carries to another size). ``clinic-N`` is
a minimal spec (method, task, data, ε = 10: every other setting the library's default) on a fresh clinic
file of N patients that is not the demo's (``privet demo-data --patients N --seed 7``); ``news-N`` the same
minimal spec on the first N real news leads of ``privet evaluate --dataset news``. The estimate is the plan's
(``core.run.planning.run_estimate``: the settings the adaptive default will choose, the forecast's most
documents), and the row says whether the documents written fall in the forecast's range.

``--conditions idle,busy`` runs every case twice in a row: on the machine as it is, then with ``--busy-processes``
(default 2) processes that only spin (``python -c 'while True: pass'``) started ``--busy-warmup`` seconds before
the plan is made and killed when the run ends, so the plan's speed test, the thread choice and the run all see
them. The busy run is calibrated by the idle one before it, as a custodian's next run would be.

    python bench/estimate.py --cases clinic-100 --conditions idle,busy --json-out W/estimate-busy.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.run.calibration import calibration_key, save_calibration
from core.run.estimate import EtaTracker
from core.common.paths import resources_dir
from core.common.progress import ProgressEvent
from core.specs.runspec import ModelChoice, RunSpec

DEMO_SPEC = resources_dir() / "demo" / "demo_run.toml"


@dataclass
class TimingReporter:
    """Feeds the tracker like the desktop's child does, and samples its time left once per second."""

    tracker: EtaTracker
    t0: float = field(default_factory=time.monotonic)
    samples: list[tuple[float, float]] = field(default_factory=list)  # (elapsed, predicted time left)
    stages: dict[str, float] = field(default_factory=dict)
    _starts: dict[str, float] = field(default_factory=dict)
    trace: Path | None = None
    _traced: float = 0.0

    def emit(self, event: ProgressEvent) -> None:
        data = event.to_dict()
        self.tracker.update(data)
        now = time.monotonic() - self.t0
        if event.kind == "stage_start":
            self._starts[event.stage] = now
        elif event.kind == "stage_end" and event.stage in self._starts:
            self.stages[event.stage] = now - self._starts[event.stage]
        if not self.samples or now - self.samples[-1][0] >= 1.0:
            self.samples.append((now, self.tracker.remaining_s()))
            if self.trace is not None and (len(self.samples) == 1 or now - self._traced >= 60.0):
                self._traced = now  # a line a minute: what the Run page would show, even if the run is cut short
                with open(self.trace, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"elapsed_s": round(now, 1), "predicted_left_s": round(self.samples[-1][1], 1),
                                         "stage": event.stage}) + "\n")

    def cancelled(self) -> bool:
        return False


MINIMAL_TASKS = {
    "clinic": "Answer patients' questions about which disease matches their symptoms.",
    "news": "Answer readers' questions about recent news stories.",
}


def minimal_spec(name: str, work: Path) -> RunSpec:
    """A minimal spec on a corpus that is not the demo's (``clinic-N`` or ``news-N``)."""
    kind, n = name.split("-", 1)
    path = work / f"{name}.csv"
    if kind == "clinic":
        from core.demo.clinic import make_clinic_corpus
        from core.demo.files import write_clinic

        write_clinic(make_clinic_corpus(int(n), seed=7), work / name)
        path = work / name / "notes.csv"
        columns = ("note", "id", "patient")
    else:
        from core.evaluation.news import read_news

        with open(path, "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["id", "text"])
            writer.writerows(read_news()[: int(n)])
        columns = ("text", "id", "")
    spec = RunSpec.from_dict({"method": "dp_synrag", "task": MINIMAL_TASKS[kind], "privacy": {"epsilon": 10.0},
                              "data": {"path": str(path), "text_column": columns[0], "id_column": columns[1],
                                       "person_column": columns[2], "dataset_name": f"bench-{name}"}})
    return spec


def case_spec(name: str, work: Path) -> RunSpec:
    if name.startswith(("clinic-", "news-")):
        return minimal_spec(name, work)
    spec = RunSpec.load(DEMO_SPEC)
    spec.data.dataset_name = f"bench-{name}"  # each case its own dataset: a subset may equal the whole corpus
    if name == "demo":
        return spec
    if not name.startswith(("tiny-", "smol-")):
        raise SystemExit(f"unknown case {name!r}: use demo, smol-N or tiny-N")
    n = int(name.split("-", 1)[1])
    source = Path(spec.data.path)
    subset = work / f"notes-{n}.csv"
    with open(source, encoding="utf-8", newline="") as fh, open(subset, "w", encoding="utf-8", newline="") as out:
        reader = csv.reader(fh)
        writer = csv.writer(out)
        writer.writerow(next(reader))
        for i, row in enumerate(reader):
            if i >= n:
                break
            writer.writerow(row)
    spec.data.path = str(subset)
    if name.startswith("tiny-"):
        spec.llm = ModelChoice(source="tiny-random")
        spec.embedder = ModelChoice(source="tiny-random")
    spec.dp_synrag.domain_lists = [str((DEMO_SPEC.parent / p).resolve()) for p in spec.dp_synrag.domain_lists]
    return spec


def busy_processes(n: int) -> list[subprocess.Popen]:
    """``n`` processes that keep a core each busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def run_case(name: str, work: Path, condition: str = "idle", order: int = 0) -> dict[str, Any]:
    from core.run.pipeline import load_spec_corpus, plan, run_pipeline
    from core.run.planning import run_estimate

    spec = case_spec(name, work)
    corpus = load_spec_corpus(spec)
    n_units = len(corpus.units)
    summary = plan(spec, corpus)
    planned = run_estimate(spec, summary)
    forecast = summary.documents_range or (0, 0)
    reporter = TimingReporter(EtaTracker(planned), trace=work / f"trace-{order}-{name}-{condition}.jsonl")
    with open(reporter.trace, "w", encoding="utf-8") as fh:  # type: ignore[arg-type]
        fh.write(json.dumps({"case": name, "units": n_units, "estimate_s": round(planned.total_s, 1),
                             "basis": planned.basis}) + "\n")
    start = time.monotonic()
    load_before = os.getloadavg()[0]
    # a folder of its own for each run in the sequence: a case repeated in one folder would resume the finished run
    result = run_pipeline(spec, reporter, run_dir=work / f"run-{order}-{name}-{condition}")
    actual = time.monotonic() - start
    factor = reporter.tracker.finished_factor()
    if factor is not None:
        save_calibration(calibration_key(spec), factor, reporter.tracker.stage_factors())
    half = min(reporter.samples, key=lambda s: abs(s[0] - actual / 2)) if reporter.samples else (0.0, 0.0)
    return {
        "case": name,
        "condition": condition,
        "load_average_at_start": round(load_before, 2),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "model": spec.llm.source,
        "units": n_units,
        "documents": result.n_synthetic,
        "forecast_documents": list(forecast),
        "in_forecast": forecast[0] <= result.n_synthetic <= forecast[1],
        "basis": planned.basis,
        "busy_factor": round(summary.busy_factor, 2),
        "estimate_s": round(planned.total_s, 1),
        "actual_s": round(actual, 1),
        "estimate_over_actual": round(planned.total_s / actual, 2),
        "at_half_elapsed_s": round(half[0], 1),
        "at_half_predicted_left_s": round(half[1], 1),
        "at_half_true_left_s": round(actual - half[0], 1),
        "stages_estimate_s": {s: round(v, 1) for s, v in planned.stages},
        "stages_actual_s": {s: round(v, 1) for s, v in reporter.stages.items()},
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| case | condition | model | units | docs (forecast) | estimate | actual | estimate ÷ actual | at half time: predicted "
            "left / true left | speed test: × slower | estimate based on |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['case']} | {r.get('condition', 'idle')} | {r['model']} | {r['units']} | {r['documents']} ({r['forecast_documents'][0]}–"
        f"{r['forecast_documents'][1]}) | {r['estimate_s']:.0f} s | "
        f"{r['actual_s']:.0f} s | **{r['estimate_over_actual']:.2f}** | {r['at_half_predicted_left_s']:.0f} s / "
        f"{r['at_half_true_left_s']:.0f} s | {r.get('busy_factor', 1.0):.2f} | {r['basis']} |\n" for r in rows)
    return head + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="tiny-120,tiny-600,smol-200,demo")
    parser.add_argument("--conditions", default="idle",
                        help="idle, busy or both in a row (idle,busy): busy runs beside --busy-processes spinning ones")
    parser.add_argument("--busy-processes", type=int, default=2)
    parser.add_argument("--busy-warmup", type=float, default=30.0,
                        help="seconds the busy processes run before the plan is made (the load average sees them)")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the data folder (ledger, calibration) and runs here instead of a temporary folder; "
                             "a calibration.json already in WORK/home is used, as a later run on this computer would")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="privet-bench-estimate-") as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        calibration = work / "home" / "calibration.json"
        runs = [(name.strip(), c.strip()) for name in args.cases.split(",") for c in args.conditions.split(",")]
        for order, (name, condition) in enumerate(runs):
            if condition not in ("idle", "busy"):
                raise SystemExit(f"unknown condition {condition!r}: use idle or busy")
            # Each case its own data folder (a subset of the demo corpus is the same dataset to the ledger,
            # which would refuse a new name for it), with the speed calibration of the cases before it.
            home = work / (f"home-{name}" if condition == "idle" else f"home-{name}-{condition}")
            home.mkdir(parents=True, exist_ok=True)
            if calibration.is_file():
                shutil.copyfile(calibration, home / "calibration.json")
            os.environ["PRIVET_HOME"] = str(home)
            hogs = busy_processes(args.busy_processes) if condition == "busy" else []
            try:
                if hogs:
                    time.sleep(args.busy_warmup)
                row = run_case(name, work, condition, order)
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
            row["busy_processes"] = len(hogs)
            calibration = home / "calibration.json"
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json_out:
                args.json_out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
