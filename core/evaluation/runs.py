"""Generating the synthetic corpora an evaluation compares, through the real pipeline.

Every (method, epsilon) pair runs the pipeline's method adapter (``core.methods.registry``)
on the members' file, sharing one loaded LLM and embedder, with its own run folder and a
ledger private to the evaluation (evaluation runs never touch the custodian's ledger). There
is no export: evaluation outputs never reach a certificate.
``dp_synrag_l1`` is DP-SynRAG with hard clustering (L = 1), an ablation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.common.checkpoints import Checkpoints
from core.corpus import dataset_fingerprint
from core.common.errors import PrivetError
from core.evaluation.config import SWEPT_METHODS, EvaluationConfig
from core.ledger import Ledger
from core.ledger.booking import load_spec_corpus, new_run_id
from core.methods import registry
from core.methods.base import MethodContext, SyntheticDoc
from core.methods.class_conditional import method_for
from core.methods.wave_size import default_batch_rows
from core.common.paths import resources_dir
from core.privacy.planner import public_delta
from core.common.progress import NULL_REPORTER, Reporter
from core.specs.method_catalogue import facts
from core.specs.runspec import DataSpec, DocumentSpec, OutputSpec, PrivacySpec, RunSpec


@dataclass
class GeneratedCorpus:
    label: str  # e.g. "dp_synrag ε=10"
    method: str
    epsilon: float
    delta: float
    rho_total: float
    texts: list[str]
    seconds: float
    diagnostics: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {
            "label": self.label,
            "method": self.method,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho_total": self.rho_total,
            "n_synthetic": len(self.texts),
            "seconds": round(self.seconds, 1),
            "diagnostics": self.diagnostics,
        }


def label_of(method: str, epsilon: float) -> str:
    return f"{method} ε={epsilon:g}"


def run_spec(config: EvaluationConfig, members_csv: Path, method: str, epsilon: float) -> RunSpec:
    """The run spec of one (method, epsilon) pair at the configured scale."""
    scale, dataset = config.scale, config.dataset
    dp = replace(scale.dp_synrag, domain_lists=[str(resources_dir() / p) for p in dataset.domain_lists])
    if method == "dp_synrag_l1":
        dp = replace(dp, L=1)
    spec = RunSpec(
        method="dp_synrag" if method == "dp_synrag_l1" else method,
        task=dataset.task,
        data=DataSpec(path=str(members_csv), text_column="text", id_column="id", person_column="person"),
        privacy=PrivacySpec(epsilon=epsilon),
        llm=scale.llm,
        embedder=scale.embedder,
        writing=scale.writing,
        document=DocumentSpec(document_form=dataset.document_form),
        dp_synrag=dp,
        aug_pe=scale.aug_pe,
        output=OutputSpec(folder=""),
    )
    return facts(spec.method).public_defaults(spec)  # what `privet run` runs: the form and L its public rules pick


def method_available(method: str) -> bool:
    try:
        registry.get("dp_synrag" if method == "dp_synrag_l1" else method)
    except PrivetError:
        return False
    return True


class GreedyCache:
    """Wraps a language model and memoises its *greedy* (temperature 0) completions.

    Greedy decoding is deterministic, so serving a repeated prompt from the cache is exactly
    what the model would return: the keyword extraction of DP-SynRAG then runs once per
    evaluation instead of once per (method, epsilon). Sampled completions are never cached.
    """

    def __init__(self, llm) -> None:
        self._llm = llm
        self._cache: dict[tuple[str, int], str] = {}

    def __getattr__(self, name):
        return getattr(self._llm, name)

    def generate(self, user_messages, max_new_tokens: int, temperature: float = 0.7) -> list[str]:
        if temperature > 0:
            return self._llm.generate(user_messages, max_new_tokens, temperature)
        missing = [m for m in dict.fromkeys(user_messages) if (m, max_new_tokens) not in self._cache]
        if missing:
            for message, answer in zip(missing, self._llm.generate(missing, max_new_tokens, 0.0)):
                self._cache[(message, max_new_tokens)] = answer
        return [self._cache[(m, max_new_tokens)] for m in user_messages]


def evaluation_delta(n_members: int) -> float:
    """δ of an evaluation run: 1/(10·N), N = the benchmark's size rounded up to a power of ten.

    Unlike a custodian's data, an evaluation's member set is public (the evaluator built it), so
    its size may serve as the stated public bound N (``core.privacy.planner.public_delta``).
    """

    bound = 1
    while bound < n_members:
        bound *= 10
    return public_delta(bound)


def generate(
    config: EvaluationConfig, members_csv: Path, method: str, epsilon: float, work_dir: Path, llm, embedder,
    reporter: Reporter = NULL_REPORTER,
) -> GeneratedCorpus:
    """Run one method on the members with already loaded models (the pipeline's method adapters).

    Budget is charged, before each stage draws, to the evaluation's own ledger; nothing is
    exported. ``llm`` should be a :class:`GreedyCache` shared by all runs of the evaluation.
    """

    label = label_of(method, epsilon)
    run = run_method(run_spec(config, members_csv, method, epsilon), work_dir, run_folder(work_dir, label), llm,
                     embedder, reporter)
    return GeneratedCorpus(label, method, epsilon, run.delta, run.rho_planned, [d.text for d in run.documents],
                           run.seconds, dict(run.diagnostics))


def run_folder(work_dir: Path, label: str) -> Path:
    """The private run folder of one (method, ε) of an evaluation."""
    return work_dir / "runs" / label.replace(" ", "_").replace("ε=", "eps")


@dataclass
class MethodRun:
    """What one method run of an evaluation wrote and spent (its ρ planned and charged, its δ, its time)."""

    documents: list[SyntheticDoc]
    diagnostics: dict[str, int]
    delta: float
    rho_planned: float
    rho_charged: float
    seconds: float
    derived: dict[str, float] = field(default_factory=dict)  # the plan's derived values (σ, a per-document ε)
    cpu_seconds: float = 0.0  # CPU time of this process during the run (all its threads): load-independent


def run_method(spec: RunSpec, work_dir: Path, run_dir: Path, llm, embedder,
               reporter: Reporter = NULL_REPORTER) -> MethodRun:
    """``spec``'s method (per class with a label column) on its data with loaded models, every stage charged
    before it draws to the evaluation's own ledger in ``work_dir``; nothing is exported."""
    corpus = load_spec_corpus(spec)
    delta = spec.privacy.delta if spec.privacy.delta > 0 else evaluation_delta(len(corpus.units))
    adapter = method_for(spec)
    summary = adapter.plan_summary(spec, delta, len(corpus.units))
    fingerprint, run_id = dataset_fingerprint(corpus), new_run_id()
    with Ledger(work_dir / "ledger.db") as ledger:

        def charge(stage: str, rho: float, description: str, delta_part: float = 0.0) -> None:
            ledger.charge(fingerprint, run_id, stage, rho, delta, description, delta_part=delta_part)

        ctx = MethodContext(
            llm=llm, embedder=embedder, task=spec.task, charge=charge, reporter=reporter,
            # the pipeline's layout (checkpoints/<method>), which grounding.read_release reads: the flat folder left
            # every released topic unread, and the clinic evaluation counted 98 % of its documents unsupported
            checkpoints=Checkpoints(run_dir / "checkpoints" / spec.method), test_seed=None,
            max_prompt_tokens=spec.writing.max_prompt_tokens,
            batch_rows=spec.writing.batch_rows or default_batch_rows(llm.device),
        )
        started, cpu_started = time.monotonic(), time.process_time()
        documents, diagnostics, _notes = adapter.run(corpus, spec, delta, ctx)
        seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
        charged = sum(float(r["rho"]) for r in ledger.entries(fingerprint)
                      if r["kind"] == "charge" and r["run_id"] == run_id)
    derived = {k: float(v) for k, v in summary.derived.items() if isinstance(v, (int, float))}
    return MethodRun(list(documents), dict(diagnostics), delta, summary.rho_total, charged, seconds, derived,
                     cpu_seconds)


def plan_runs(config: EvaluationConfig) -> list[tuple[str, float]]:
    """(method, epsilon) pairs: the swept methods (DP-SynRAG and Aug-PE) over every epsilon; the other baselines too
    unless the scale limits them."""
    pairs = []
    for method in config.methods:
        sweep = method in SWEPT_METHODS or config.scale.sweep_all_methods
        for eps in (config.epsilons if sweep else (config.max_epsilon,)):
            pairs.append((method, eps))
    return pairs
