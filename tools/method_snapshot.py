"""A snapshot of what every registered method plans, charges and certifies, to compare two commits.

Run at two commits and compare the files (a refactor must leave them identical):

    PRIVET_HOME=$(mktemp -d) HF_HUB_OFFLINE=1 .venv/bin/python tools/method_snapshot.py before.json
    ... change the code ...
    PRIVET_HOME=$(mktemp -d) HF_HUB_OFFLINE=1 .venv/bin/python tools/method_snapshot.py after.json
    .venv/bin/python tools/method_snapshot.py --compare before.json after.json

For each method, on the demo spec (resources/demo/demo_run.toml) with the tiny random models: the
``privet plan`` text on the whole demo corpus, the stages the privacy record plans, the method's
certificate parameters and the certificate's parameter and stage tables as rendered, and the time
estimate's stages; then a test-mode run (fixed seed, nothing exported) on the first 120 demo notes: its
charges (as the ledger wrote them, and as its record states them), its record's stages and parameters, the
rendered certificate's tables and the documents it wrote. Public demo data only.
Not a test (it runs every method); a developer's check, like ``tools/import_graph.py``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.methods.registry import get, names  # noqa: E402
from core.specs.runspec import ModelChoice, RunSpec  # noqa: E402

DEMO = ROOT / "resources" / "demo" / "demo_run.toml"
RUN_UNITS = 120
# Small sizes for the test-mode runs (each method's own section; the plan uses the demo's defaults).
RUN_SETTINGS = {
    "dp_synrag": {"R": 6, "T": 6, "k": 5, "realisation_tokens": 24, "self_filter": False},
    "rpsg": {"m": 2, "max_new_tokens": 8, "n_variants": 1},
    "aug_pe": {"iterations": 2, "population": 6, "variations": 1, "max_new_tokens": 8},
}

# Methods whose test-mode run writes the same documents again (RPSG's writer samples from OS entropy even in
# the test mode, so its documents differ from run to run and only their number is compared).
SEEDED_WRITERS = ("dp_synrag", "dp_synth", "aug_pe")


def demo_spec(method: str, data: Path | None = None) -> RunSpec:
    spec = RunSpec.load(DEMO)
    spec.method = method
    spec.llm = ModelChoice(source="tiny-random")
    spec.embedder = ModelChoice(source="tiny-random")
    spec.output.folder = ""
    if data is not None:
        spec.data.path = str(data)
    return spec


def tables(html: str) -> dict[str, str]:
    """The rendered certificate's parameter and stage tables (the parts a method's facts fill in)."""
    found = re.findall(r"<table.*?</table>", html, flags=re.S)
    return {
        "parameters": [t for t in found if "<th width='30%' align='left'>parameter</th>" in t],
        "stages": [t for t in found if ">groups per unit</th>" in t],
    }


def planned(method: str) -> dict[str, Any]:
    from core.certificate.build import parameters_not_used
    from core.certificate.render import _guarantee, _parameters
    from core.run.estimate import estimate
    from core.run.pipeline import load_spec_corpus, plan
    from core.run.pipeline_cli import cmd_plan

    spec = demo_spec(method)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as fh:
        fh.write(DEMO.read_text(encoding="utf-8").replace('method = "dp_synrag"', f'method = "{method}"')
                 .replace('source = "default"', 'source = "tiny-random"')
                 .replace('path = "clinic/notes.csv"', f'path = "{DEMO.parent / "clinic" / "notes.csv"}"')
                 .replace('"../vocab/', f'"{DEMO.parent.parent / "vocab"}/'))
    out = io.StringIO()
    cmd_plan(argparse.Namespace(spec=fh.name), out)
    Path(fh.name).unlink()
    corpus = load_spec_corpus(spec)
    summary = plan(spec, corpus)
    adapter = get(method)
    params = adapter.parameters(spec, summary)
    stages = adapter.record_stages(spec, summary.delta)
    cert = {"method_parameters": params, "parameters_not_used": parameters_not_used(method, params)}
    guarantee = {"guarantee": {"end_to_end_dp": summary.end_to_end_dp, "unit_description": "", "neighbouring_relation": "",
                               "definition": "", "rho_total": 0, "delta": 0, "epsilon_tight": 0, "epsilon_loose": 0,
                               "epsilon_target": 0, "stages": stages, "accounting_method": ""}}
    est = estimate(spec, len(corpus.units), calibrate=False)
    return {
        "plan_text": out.getvalue(),
        "stages": summary.stages,
        "rho_total": summary.rho_total,
        "record_stages": stages,
        "parameters": params,
        "parameters_table": _parameters(cert),
        "stage_table": _guarantee(guarantee),
        "estimate": {"stages": est.stages, "items": est.items},
    }


def ran(method: str, folder: Path) -> dict[str, Any]:
    from core.certificate.build import build_certificate
    from core.certificate.render import render_html
    from core.run.export import _why_few, read_synthetic
    from core.run.pipeline import run_pipeline
    from core.common.progress import CallbackReporter

    source = DEMO.parent / "clinic" / "notes.csv"
    data = folder / f"{method}-notes.csv"
    with open(source, newline="", encoding="utf-8") as fh, open(data, "w", newline="", encoding="utf-8") as out:
        rows = list(csv.reader(fh))[: RUN_UNITS + 1]
        csv.writer(out).writerows(rows)
    spec = demo_spec(method, data)
    spec.test_mode_seed = 11
    for key, value in RUN_SETTINGS.get(method, RUN_SETTINGS["dp_synrag"]).items():
        setattr(getattr(spec, method) if method in ("rpsg", "aug_pe") else spec.dp_synrag, key, value)
    charged: list[tuple[str, float, str]] = []  # what each charge wrote to the ledger, as the run reported it
    reporter = CallbackReporter(lambda e: charged.append((e.stage, e.rho, e.message)) if e.kind == "charged" else None)
    result = run_pipeline(spec, reporter=reporter, run_dir=folder / f"run-{method}")
    record = result.record
    cert = build_certificate(record, [result.synthetic_path], {"custodian": "snapshot"})
    html = render_html(cert)
    return {
        "charges": [(s["stage"], s["rho"], s.get("delta", 0.0)) for s in record.stages],
        "ledger_charges": charged,
        "rho_total": record.rho_total,
        "epsilon_tight": record.epsilon_tight,
        "record_stages": record.stages,
        "parameters": record.method_parameters,
        "certificate_guarantee": cert["guarantee"],
        "certificate_scope": cert["scope_and_hazards"],
        "certificate_tables": tables(html),
        "why_few": _why_few(record),
        "documents": result.n_synthetic,
        "texts": [d["text"] for d in read_synthetic(result.synthetic_path)] if method in SEEDED_WRITERS else None,
    }


def snapshot() -> dict[str, Any]:
    from core.certificate.render import PARAMETER_MEANINGS
    from core.specs.stage_labels import STAGE_LABELS, stage_label

    labels = {s: stage_label(s) for s in [*STAGE_LABELS, "aug_pe_histogram_1", "aug_pe_histogram_12", "unknown_stage"]}
    with tempfile.TemporaryDirectory() as folder:
        return {
            "stage_labels": labels,
            "parameter_meanings": dict(sorted(PARAMETER_MEANINGS.items())),
            "methods": {m: {"plan": planned(m), "run": ran(m, Path(folder))} for m in names()},
        }


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    problems = [f"{path}: {x!r} != {y!r}" for path, x, y in _differences(a, b, "")]
    for line in problems[:40]:
        print(line)
    print("identical" if not problems else f"{len(problems)} differences")
    return 0 if not problems else 1


def _differences(a: Any, b: Any, path: str):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            yield from _differences(a.get(key), b.get(key), f"{path}/{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, a, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="where to write the snapshot (JSON)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(Path(args.compare[0]), Path(args.compare[1]))
    import core.run.machine_speed  # the estimate's speed test reads the reference rate: plan text not machine-dependent

    core.run.machine_speed.probe_rate = lambda seconds=0.0: core.run.machine_speed.REFERENCE_ROUNDS_S  # type: ignore[assignment]
    Path(args.out).write_text(json.dumps(snapshot(), indent=1, sort_keys=True, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
