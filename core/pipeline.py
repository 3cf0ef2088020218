"""Run orchestration: spec -> plan -> charged stages -> synthetic corpus -> export.

``plan(spec)`` says what a run would spend and derive, without charging anything.
``run_pipeline(spec, reporter)`` runs it: loads the corpus, refuses a plan over the
dataset's cap, loads the models, runs the method (which charges the ledger at the start of
each DP stage), writes the synthetic corpus and the privacy record to the run folder, and
exports the release (corpus + signed certificate) to the output folder.

The run folder (``data_dir()/runs/<run_id>``) keeps checkpoints of released DP outputs so
``resume`` never redraws a charged stage; it is private workspace and is never exported.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from core import __version__
from core.checkpoints import Checkpoints
from core.corpus import Corpus, dataset_fingerprint, load_corpus
from core.errors import PrivetError
from core.ledger import Ledger
from core.methods.dp_synrag import MethodContext, SyntheticDoc
from core.paths import data_dir
from core.privacy.conversion import rho_to_eps
from core.privacy.planner import default_delta, delta_warning
from core.privacy_record import PrivacyRecord
from core.progress import NULL_REPORTER, ProgressEvent, Reporter, StageProgress
from core.runspec import RunSpec

SYNTHETIC_JSONL = "synthetic.jsonl"
SYNTHETIC_CSV = "synthetic.csv"


@dataclass
class PlanSummary:
    """What a run would spend, shown before anything is charged (no private text)."""

    method: str
    epsilon: float
    delta: float
    rho_total: float
    stages: list[tuple[str, float]]
    derived: dict[str, float]
    warnings: list[str]
    n_units: int  # shown on screen only; never exported
    estimate_seconds: float | None = None
    estimate_memory_mb: float | None = None
    end_to_end_dp: bool = True

    @property
    def epsilon_loose(self) -> float:
        """The seed's looser conversion of the same rho, shown for comparison."""
        return rho_to_eps(self.rho_total, self.delta, "loose")


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    synthetic_path: Path
    n_synthetic: int
    record: PrivacyRecord
    export_dir: Path | None = None
    private_diagnostics: dict[str, int] = field(default_factory=dict)  # on screen only


# -- planning ------------------------------------------------------------------------------


def load_spec_corpus(spec: RunSpec) -> Corpus:
    d = spec.data
    if not d.path:
        raise PrivetError("The run spec names no data.", "Set [data] path to a folder or a .csv/.tsv/.jsonl file.")
    return load_corpus(d.path, d.text_column, d.id_column, d.person_column, d.max_unit_chars)


def resolve_delta(spec: RunSpec, n_units: int) -> float:
    return spec.privacy.delta if spec.privacy.delta > 0 else default_delta(n_units)


def plan(spec: RunSpec, corpus: Corpus | None = None) -> PlanSummary:
    """The budget split and derived parameters for this spec on this corpus."""
    corpus = corpus or load_spec_corpus(spec)
    n = len(corpus.units)
    delta = resolve_delta(spec, n)
    method = _method(spec.method)
    summary = method.plan_summary(spec, delta, n)
    warning = delta_warning(delta, n)
    if warning:
        summary.warnings.append(warning)
    summary.estimate_seconds, summary.estimate_memory_mb = estimate_cost(spec, n)
    return summary


def estimate_cost(spec: RunSpec, n_units: int) -> tuple[float, float]:
    """A rough time (s) and memory (MB) estimate: time from ``core.estimate`` (work over this
    computer's measured speed), memory from the wave size and the packaged model's KV cache."""
    from core.estimate import estimate

    p = spec.dp_synrag
    prompt = min(p.max_prompt_tokens, 200)
    seconds = estimate(spec, n_units).total_s
    wave_rows = p.batch_rows or default_batch_rows(spec.llm.device)
    kv_mb = wave_rows * (prompt + p.T) * 30 * 2 * 192 * 4 / 1e6  # SmolLM2: 30 layers, K and V, 3 heads x 64
    return seconds, 1200.0 + kv_mb


# -- running -------------------------------------------------------------------------------


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def run_pipeline(
    spec: RunSpec,
    reporter: Reporter = NULL_REPORTER,
    run_dir: Path | None = None,
    resume: bool = False,
    ledger: Ledger | None = None,
) -> RunResult:
    """Run the spec end to end. ``resume`` reuses the checkpoints in ``run_dir``."""
    started = _now()
    test_mode = spec.test_mode_seed is not None
    out_dir = Path(spec.output.folder) if spec.output.folder else None
    if out_dir and not test_mode:
        _check_output_folder(out_dir, spec.output.overwrite)

    corpus = load_spec_corpus(spec)
    n = len(corpus.units)
    delta = resolve_delta(spec, n)
    method = _method(spec.method)
    summary = method.plan_summary(spec, delta, n)
    fingerprint = dataset_fingerprint(corpus)
    ledger = ledger or Ledger()

    if resume:
        if run_dir is None or not (Path(run_dir) / "run.json").exists():
            raise PrivetError("There is no interrupted run to resume in that folder.", "Start a new run instead.")
        run_id = json.loads((Path(run_dir) / "run.json").read_text())["run_id"]
    else:
        ledger.check_plan(fingerprint, summary.rho_total, delta)
        run_id = Path(run_dir).name if run_dir else new_run_id()  # one id: run folder, ledger, certificate
        run_dir = Path(run_dir) if run_dir else data_dir() / "runs" / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps({"run_id": run_id, "started_at": started, "spec": spec.to_dict()}))
    run_dir = Path(run_dir)

    def charge(stage: str, rho: float, description: str) -> None:
        """Written to the ledger *before* the stage draws any noise."""
        ledger.charge(fingerprint, run_id, stage, rho, delta, description)
        reporter.emit(ProgressEvent(stage, "charged", rho=rho, message=description))

    models = _load_models(spec, reporter)
    ctx = MethodContext(
        llm=models.llm,
        embedder=models.embedder,
        task=spec.task,
        charge=charge,
        reporter=reporter,
        checkpoints=Checkpoints(run_dir / "checkpoints"),
        test_seed=spec.test_mode_seed,
        max_prompt_tokens=spec.dp_synrag.max_prompt_tokens,
        batch_rows=wave_rows(spec, models.llm),
    )
    documents, diagnostics, notes = method.run(corpus, spec, delta, ctx)

    synthetic_path = write_synthetic(run_dir, documents)
    stages = method.record_stages(spec, delta)
    record = PrivacyRecord(
        run_id=run_id,
        method=spec.method,
        method_parameters=method.parameters(spec, summary),
        unit_kind=corpus.unit_kind,
        person_column=spec.data.person_column,
        dataset_fingerprint=fingerprint,
        epsilon_target=spec.privacy.epsilon,
        delta=delta,
        conversion="tight",
        rho_total=summary.rho_total,
        stages=stages,
        epsilon_tight=rho_to_eps(summary.rho_total, delta, "tight"),
        epsilon_loose=summary.epsilon_loose,
        samplers=method.samplers(),
        models=models.fingerprints,
        device=models.llm.device,
        started_at=started,
        finished_at=_now(),
        privet_version=__version__,
        privet_commit=_git_commit(),
        end_to_end_dp=summary.end_to_end_dp,
        scope_notes=notes,
        test_mode=test_mode,
    )
    record.save(run_dir)
    result = RunResult(run_id, run_dir, synthetic_path, len(documents), record, None, diagnostics)

    if out_dir and not test_mode:
        from core.export import export_release  # the export builds and signs the certificate

        identity = {
            "custodian": spec.output.custodian,
            "organisation": spec.output.organisation,
            "irb_protocol": spec.output.irb_protocol,
        }
        progress = StageProgress(reporter, "export", 1).start("Writing the release and its certificate")
        result.export_dir = export_release(run_dir, out_dir, identity, overwrite=spec.output.overwrite, ledger=ledger)
        progress.advance()
        progress.finish()
    reporter.emit(ProgressEvent("run", "done", message=str(result.export_dir or run_dir)))
    return result


def default_batch_rows(device: str) -> int:
    """Rows per wave when the model's cache size is unknown (e.g. the llama.cpp backend)."""
    return 512 if device.startswith("cuda") else 64


def wave_rows(spec: RunSpec, llm) -> int:
    """Rows per private-prediction wave: ``batch_rows`` if set, else what fits the memory budget.

    A row holds its KV cache (prompt + T tokens) and a few vocabulary-wide float32 buffers
    (logits, clipped logits). The budget is ``memory_budget_mb``, else 1 GB on the CPU and
    half the free memory on a GPU. On CUDA out-of-memory the engine halves the wave anyway.
    """
    p = spec.dp_synrag
    if p.batch_rows:
        return p.batch_rows
    per_token = kv_bytes_per_token(llm)
    if per_token is None:
        return default_batch_rows(llm.device)
    budget = (p.memory_budget_mb or default_memory_budget_mb(llm.device)) * 1e6
    per_row = (p.max_prompt_tokens + p.T) * per_token + 4 * 4 * llm.vocab_size
    return max(1, min(4096, int(budget // per_row)))


def kv_bytes_per_token(llm) -> int | None:
    model = getattr(llm, "model", None)
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "num_hidden_layers"):
        return None
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    element = next(model.parameters()).element_size()
    return config.num_hidden_layers * 2 * kv_heads * head_dim * element


def default_memory_budget_mb(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return free / 2e6
    return 1024.0


def write_synthetic(run_dir: Path, documents: list[SyntheticDoc]) -> Path:
    """synthetic.jsonl and synthetic.csv (id, text), each written atomically."""
    jsonl = "".join(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n" for d in documents)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "text"])
    for d in documents:
        writer.writerow([d.id, d.text])
    _atomic_write(run_dir / SYNTHETIC_JSONL, jsonl)
    _atomic_write(run_dir / SYNTHETIC_CSV, buffer.getvalue())
    return run_dir / SYNTHETIC_JSONL


def read_synthetic(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- helpers -------------------------------------------------------------------------------


@dataclass
class LoadedModels:
    llm: object
    embedder: object
    fingerprints: list[dict]


def _load_models(spec: RunSpec, reporter: Reporter) -> LoadedModels:
    from core.models.registry import load_embedder, load_language_model, model_fingerprint

    progress = StageProgress(reporter, "models", 2).start("Loading models")
    llm = load_language_model(spec.llm)
    progress.advance()
    embedder = load_embedder(spec.embedder)
    progress.advance()
    progress.finish()
    fingerprints = [
        {"role": "language model", **model_fingerprint(spec.llm)},
        {"role": "embedder", **model_fingerprint(spec.embedder)},
    ]
    return LoadedModels(llm, embedder, fingerprints)


def _method(name: str):
    from core.methods import registry

    return registry.get(name)


def _check_output_folder(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise PrivetError(
            f"The output folder {out_dir} is not empty.",
            "Choose an empty or new folder, or allow overwriting (--overwrite / [output] overwrite = true).",
        )


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""
