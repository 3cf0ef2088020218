"""One evaluation run: generate the corpora, then measure utility, leakage, quality, membership.

``run_evaluation(config, reporter)`` returns a JSON-ready dict of every figure (no private
text: counts, rates and scores only). The members' file and the run folders live under a
private work folder (``data_dir()/evaluations/<id>``), never in the results folder.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from core.evaluation import coverage, dp_rag, leakage, membership, quality, roles, runs
from core.evaluation.config import REFERENCE_METHOD, EvaluationConfig, ScaleConfig
from core.evaluation.data import EvaluationData, prepare_data
from core.evaluation.public_only import PUBLIC_ONLY_LABEL, PUBLIC_ONLY_METHOD, public_only_documents
from core.evaluation.retrieval import VectorIndex
from core.evaluation.runs import evaluation_delta
from core.evaluation.utility import contains_any, score_utility
from core.models.registry import load_embedder, load_language_model
from core.common.paths import data_dir
from core.privacy.conversion import eps_to_rho
from core.common.progress import NULL_REPORTER, ProgressEvent, Reporter, StageProgress

PRIVATE = "non-private (members)"
NONE = "no retrieval"
REAL_SAMPLE = "same-size real sample (members)"
SAMPLES_PER_CORPUS = 3  # verbatim synthetic / public-only texts quoted per coverage row
COVERAGE_SEED = 0  # which random real documents form the reference sample (evaluation only, not a DP draw)


@dataclass
class Models:
    llm: object
    embedder: object


def _say(reporter: Reporter, stage: str, message: str) -> None:
    reporter.emit(ProgressEvent(stage, "stage_start", message=message))


def work_folder() -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = data_dir() / "evaluations" / stamp
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_evaluation(config: EvaluationConfig, reporter: Reporter = NULL_REPORTER, work_dir: Path | None = None) -> dict:
    t0 = time.monotonic()
    scale = config.scale
    work = work_dir or work_folder()
    data = prepare_data(config.dataset, scale.max_members, scale.canaries, scale.benign_questions,
                        scale.attack_questions, work)
    notes: list[str] = []


    _say(reporter, "evaluate", "Loading the models")
    models = Models(runs.GreedyCache(load_language_model(scale.llm)), load_embedder(scale.embedder))
    corpora: list[runs.GeneratedCorpus] = []
    for method, eps in runs.plan_runs(config):
        if not runs.method_available(method):
            notes.append(f"Method {method} is not available in this build; skipped.")
            continue
        _say(reporter, "evaluate", f"Generating {runs.label_of(method, eps)}")
        corpora.append(runs.generate(config, data.members_csv, method, eps, work, models.llm, models.embedder,
                                     reporter))
    _say(reporter, "evaluate", "Writing the public-only baseline (no private data)")
    corpora.append(public_only_corpus(config, models.llm, comparison_size(config, corpora)))

    result = {
        "dataset": config.dataset.name,
        "scale": scale.name,
        "models": {"llm": models.llm.name, "embedder": models.embedder.name},
        "epsilons": list(config.epsilons),
        "methods": list(config.methods),
        "split": {"members": len(data.members), "non_members": len(data.non_members), "canaries": len(data.canaries),
                  "benign_questions": len(data.benign), "attack_questions": len(data.attack)},
        "settings": {"top_k": scale.top_k, "answer_tokens": scale.answer_tokens, "mia_per_class": scale.mia_per_class,
                     "dp_synrag": {k: v for k, v in scale.dp_synrag.__dict__.items() if k != "domain_lists"},
                     "writing": dict(scale.writing.__dict__),
                     **own_settings(scale, config.methods)},
        "runs": [c.summary() for c in corpora],
    }
    _say(reporter, "evaluate", "Embedding the members and the held-out non-members")
    member_emb = models.embedder.embed([r.text for r in data.members])
    held = held_out_sample(data, scale.held_out_scored)
    held_emb = models.embedder.embed(held)
    result["split"]["held_out_scored"] = len(held)
    if config.dataset.has_questions:
        evaluate_corpora(result, data, corpora, models, config, reporter, member_emb, (held, held_emb))
    else:
        notes.append("Free text without questions: coverage and quality only (no utility, leakage or attacks).")
        result["quality"] = quality_rows(data, corpora, models.embedder, scale, member_emb, (held, held_emb))
    _say(reporter, "evaluate", f"Coverage of {len(held)} held-out non-members")
    result["coverage"] = coverage_rows(data, corpora, models.embedder, config, member_emb, held, held_emb)
    _say(reporter, "evaluate", "Fidelity: classifier test, own forms, MMD²")
    result["fidelity"] = fidelity_rows(data, corpora, models.embedder, config, member_emb, (held, held_emb))
    if config.dataset.roles_file:
        result["roles"] = role_rows(data, corpora, config, work)
    result["notes"] = notes
    result["seconds"] = round(time.monotonic() - t0, 1)
    result["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return result


def held_out_sample(data: EvaluationData, limit: int) -> list[str]:
    """The held-out non-members scored by quality and coverage: every one, or ``limit`` evenly spaced."""
    texts = [r.text for r in data.non_members]
    if not limit or len(texts) <= limit:
        return texts
    step = len(texts) / limit
    return [texts[int(i * step)] for i in range(limit)]


def public_only_tokens(scale: ScaleConfig) -> int:
    """The baseline's length: the DP texts' T tokens plus about what their topic line takes."""
    return scale.dp_synrag.T + 16


def own_settings(scale: ScaleConfig, methods: tuple[str, ...]) -> dict[str, dict]:
    """The scale's own section of each compared method that has one (Aug-PE's), by its key; the method under
    test's (``scale.dp_synrag``) is recorded on its own."""
    return {m: dict(vars(getattr(scale, m))) for m in methods if m != REFERENCE_METHOD and hasattr(scale, m)}


FALLBACK_COMPARISON_SIZE = 12  # the baselines' size when no DP-SynRAG corpus was written (its R may be adaptive)


def comparison_size(config: EvaluationConfig, corpora: list) -> int:
    """How many documents the baselines write: as many as DP-SynRAG wrote at the largest ε, else R (or 12)."""
    dp = [c for c in corpora if c.method == REFERENCE_METHOD and c.epsilon == config.max_epsilon and c.texts]
    return len(dp[0].texts) if dp else (config.scale.dp_synrag.R or FALLBACK_COMPARISON_SIZE)


def public_only_corpus(config: EvaluationConfig, llm, size: int) -> runs.GeneratedCorpus:
    """The public-only baseline: ``size`` documents from the public task (and public example) alone, ε = 0."""
    started = time.monotonic()
    texts = public_only_documents(llm, config.dataset.task, size,
                                  public_only_tokens(config.scale), config.dataset.public_example)
    return runs.GeneratedCorpus(PUBLIC_ONLY_LABEL, PUBLIC_ONLY_METHOD, 0.0, 0.0, 0.0, texts,
                                time.monotonic() - started)


def evaluate_corpora(result: dict, data: EvaluationData, corpora: list, models: Models, config: EvaluationConfig,
                     reporter: Reporter, member_emb: np.ndarray | None = None,
                     held: tuple[list[str], np.ndarray] | None = None) -> None:
    scale = config.scale
    llm, embedder = models.llm, models.embedder
    benign_q = [q.question for q in data.benign]
    benign_gold = [q.answers for q in data.benign]
    attack_q = [q.question for q in data.attack]
    attack_gold = [q.answers for q in data.attack]
    benign_emb = embedder.embed(benign_q) if benign_q else np.zeros((0, embedder.dim))
    attack_emb = embedder.embed(attack_q) if attack_q else np.zeros((0, embedder.dim))
    member_texts = [r.text for r in data.members]
    private_index = VectorIndex.build(member_texts, embedder)

    members_m = leakage.NameMatcher(data.member_names)
    canaries_m = leakage.NameMatcher(data.canaries)
    control_m = leakage.NameMatcher(data.non_member_names)

    named: list[tuple[str, VectorIndex | None, dict]] = [
        (c.label, VectorIndex.build(c.texts, embedder), {"method": c.method, "epsilon": c.epsilon}) for c in corpora
    ]
    named += [(PRIVATE, private_index, {"method": "private", "epsilon": None}),
              (NONE, None, {"method": "none", "epsilon": None})]

    utility_rows, leakage_rows, per_question = [], [], {}
    progress = StageProgress(reporter, "evaluate_utility", len(named)).start("Utility and leakage")
    for label, index, meta in named:
        score, answers, _ = score_utility(label, index, benign_emb, benign_q, benign_gold, llm, scale.top_k,
                                          scale.answer_tokens)
        per_question[label] = [contains_any(a, g) for a, g in zip(answers, benign_gold)]
        utility_rows.append({**meta, **score.to_dict()})
        _, attack_answers, _ = score_utility(label, index, attack_emb, attack_q, attack_gold, llm, scale.top_k,
                                             scale.answer_tokens)
        row = {
            **meta,
            "corpus": label,
            "in_corpus": leakage.count_leakage(index.texts if index else [], members_m, canaries_m, control_m).to_dict(),
            "benign_answers": leakage.count_leakage(answers, members_m, canaries_m, control_m).to_dict(),
            "attack_answers": leakage.count_leakage(attack_answers, members_m, canaries_m, control_m).to_dict(),
            "attack_success": leakage.attack_success(attack_answers, attack_gold, members_m),
        }
        leakage_rows.append(row)
        progress.advance()
    progress.finish()
    result["utility"] = utility_rows
    result["leakage"] = leakage_rows

    result["quality"] = quality_rows(data, corpora, embedder, scale, member_emb, held)
    result["membership"] = membership_rows(data, corpora, models, config, private_index, reporter)
    result["dp_rag"] = dp_rag_curve(data, corpora, models, config, private_index, benign_emb, per_question, reporter)


def quality_rows(data: EvaluationData, corpora: list, embedder, scale, member_emb: np.ndarray | None = None,
                 held: tuple[list[str], np.ndarray] | None = None) -> list[dict]:
    if member_emb is None:
        member_emb = embedder.embed([r.text for r in data.members])
    rows = []
    for c in corpora:
        emb = embedder.embed(c.texts) if c.texts else np.zeros((0, embedder.dim))
        rows.append({"corpus": c.label, "method": c.method, "epsilon": c.epsilon,
                     **quality.quality_scores(c.texts, emb, member_emb, scale.self_bleu_sample)})
    # Reference: held-out real text against the members (the distance between two real samples).
    texts, emb = held if held is not None else ([r.text for r in data.non_members], None)
    emb = embedder.embed(texts) if emb is None else emb
    rows.append({"corpus": "held-out real (non-members)", "method": "real", "epsilon": None,
                 **quality.quality_scores(texts, emb, member_emb, scale.self_bleu_sample)})
    return rows


def coverage_rows(data: EvaluationData, corpora: list, embedder, config: EvaluationConfig,
                  member_emb: np.ndarray, held: list[str], held_emb: np.ndarray) -> list[dict]:
    """Coverage of the held-out non-members by every corpus, and by a same-size random real sample."""
    common = coverage.common_content_words(held)
    rng = np.random.default_rng(COVERAGE_SEED)
    rows = []
    for c in corpora:
        emb = embedder.embed(c.texts) if c.texts else np.zeros((0, embedder.dim))
        kind = "public_only" if c.method == PUBLIC_ONLY_METHOD else "synthetic"
        row = coverage.coverage_scores(c.label, kind, c.epsilon, c.texts, emb, held_emb, common, member_emb,
                                       rng).to_dict()
        # Released (DP) or public-only text only, never a real document: safe to quote verbatim.
        row["samples"] = [{"text": t, "junk": quality.junk_reasons(t)} for t in c.texts[:SAMPLES_PER_CORPUS]]
        rows.append(row)
    size = min(comparison_size(config, corpora), len(data.members))
    if size:
        pick = sorted(rng.choice(len(data.members), size, replace=False).tolist())
        texts = [data.members[i].text for i in pick]
        rows.append(coverage.coverage_scores(f"{REAL_SAMPLE}, n = {size}", "real_sample", None, texts,
                                             member_emb[pick], held_emb, common, member_emb, rng).to_dict())
    return rows


def fidelity_rows(data: EvaluationData, corpora: list, embedder, config: EvaluationConfig, member_emb: np.ndarray,
                  held: tuple[list[str], np.ndarray]) -> list[dict]:
    """The fidelity report (core/evaluation/fidelity.py) of every corpus against the members, with the held-out
    non-members as the held real sample: the real-vs-synthetic classifier's AUC (``c2st_auc``), the share in the
    corpus's own templates (``own_form_share``; the skeleton proxy when the dataset publishes none), MMD² beside a
    same-size real sample's. Figures only: the side-by-side pairs quote real documents and stay out."""
    from core.evaluation.fidelity import fidelity_report

    templates = config.dataset.templates()
    real = [r.text for r in data.members]
    held_texts, held_emb = held
    rows = []
    for c in corpora:
        emb = embedder.embed(c.texts) if c.texts else np.zeros((0, embedder.dim))
        report = fidelity_report(real, c.texts, templates=templates, held=held_texts, real_embeddings=member_emb,
                                 held_embeddings=held_emb, synthetic_embeddings=emb, n_pairs=0)
        rows.append({"corpus": c.label, "method": c.method, "epsilon": c.epsilon, **report.to_dict(pairs=False)})
    return rows


def role_rows(data: EvaluationData, corpora: list, config: EvaluationConfig, work: Path) -> list[dict]:
    """Role accuracy and the topic shares' total variation to the members of every corpus, and of the real
    members' documents (core/evaluation/roles.py); and every corpus's grounding (core/evaluation/grounding.py): the
    share of documents stating a content term no released word of their topic supports (``unsupported_share``) and
    the share mixing the catalogue's conditions (``mix_share``), read against the run's own released values."""
    from core.evaluation import grounding

    path = config.dataset.folder / config.dataset.roles_file
    truth = roles.clinic_truth(path)
    conditions = grounding.catalogue_conditions(path)
    real = [r.text for r in data.members]
    rows = []
    for c in corpora:
        release = grounding.read_release(runs.run_folder(work, c.label))
        grounded = grounding.grounding(c.texts, release, conditions).to_dict()
        rows.append({"corpus": c.label, "method": c.method, "epsilon": c.epsilon,
                     **roles.role_accuracy(c.texts, truth).to_dict(),
                     "topic_tv": roles.topic_share_tv(c.texts, real, truth),
                     "topic_tv_floor": roles.topic_tv_floor(c.texts, real, truth),
                     "unsupported_share": grounded["unsupported_share"], "mix_share": grounded["mix_share"],
                     "unsupported_terms": grounded["unsupported_terms"]})
    rows.append({"corpus": PRIVATE, "method": "private", "epsilon": None,
                 **roles.role_accuracy(real, truth).to_dict(), "topic_tv": 0.0, "topic_tv_floor": 0.0})
    return rows


def membership_rows(data: EvaluationData, corpora: list, models: Models, config: EvaluationConfig,
                    private_index: VectorIndex, reporter: Reporter) -> list[dict]:
    """Attacks on every corpus generated at the largest epsilon, and on the non-private control."""
    scale = config.scale
    n = min(scale.mia_per_class, len(data.members), len(data.non_members))
    step_m = max(1, len(data.members) // n) if n else 1
    step_n = max(1, len(data.non_members) // n) if n else 1
    members = [r.text for r in data.members[::step_m][:n]]
    non_members = [r.text for r in data.non_members[::step_n][:n]]
    texts, labels, emb = membership.embed_candidates(models.embedder, members, non_members)
    targets = [(c.label, c.method, VectorIndex.build(c.texts, models.embedder)) for c in corpora
               if c.epsilon == config.max_epsilon or c.method == PUBLIC_ONLY_METHOD]
    targets.append((PRIVATE, "private", private_index))
    progress = StageProgress(reporter, "evaluate_membership", len(targets) + 1).start("Membership inference")
    ref = membership.reference_nll(models.llm, texts, scale.mia_tokens)
    progress.advance()
    rows = []
    for label, method, index in targets:
        attacks = membership.run_attacks(texts, labels, emb, index, models.llm, ref, scale.context_docs,
                                         scale.mia_tokens)
        rows.append({"corpus": label, "method": method, "attacks": [a.to_dict() for a in attacks]})
        progress.advance()
    progress.finish()
    return rows


def dp_rag_curve(data: EvaluationData, corpora: list, models: Models, config: EvaluationConfig,
                 private_index: VectorIndex, benign_emb: np.ndarray, per_question: dict, reporter: Reporter) -> dict:
    """Accuracy vs number of queries when every query spends from one total budget."""
    scale = config.scale
    n = min(scale.dp_rag_questions, len(data.benign))
    questions = [q.question for q in data.benign[:n]]
    golds = [q.answers for q in data.benign[:n]]
    retrieved = private_index.retrieve(benign_emb[:n], scale.top_k)

    delta = evaluation_delta(len(data.members))
    eps = config.max_epsilon
    rho_total = eps_to_rho(eps, delta)
    points = []
    progress = StageProgress(reporter, "evaluate_dp_rag", len(scale.dp_rag_queries)).start("Query-time DP-RAG")
    for q in scale.dp_rag_queries:
        clip = dp_rag.per_query_clip(rho_total, q, scale.answer_tokens, scale.dp_synrag.tau)
        answers = dp_rag.dp_rag_answers(models.llm, questions, retrieved, clip, scale.answer_tokens,
                                        scale.dp_synrag.tau)
        acc = sum(contains_any(a, g) for a, g in zip(answers, golds)) / n if n else 0.0
        points.append({"queries": q, "clip": clip, "epsilon_per_query_basic": eps / q, "accuracy": acc})
        progress.advance()
    progress.finish()

    def flat(label: str) -> float | None:
        hits = per_question.get(label)
        return sum(hits[:n]) / n if hits and n else None

    synthetic = next((c.label for c in corpora if c.method == REFERENCE_METHOD and c.epsilon == eps), None)
    return {
        "epsilon_total": eps,
        "delta": delta,
        "rho_total": rho_total,
        "n_questions": n,
        "points": points,
        "synthetic_corpus": synthetic,
        "synthetic_accuracy": flat(synthetic) if synthetic else None,
        "private_accuracy": flat(PRIVATE),
        "none_accuracy": flat(NONE),
        "public_only_accuracy": flat(PUBLIC_ONLY_LABEL),
    }
