"""RPSG (docs/method.md §3, seed 002): realistic one-to-one synthetic variants of private seeds.

**Scope, in plain words: RPSG has no end-to-end differential-privacy guarantee.** Only the
choice of *which* candidate abstraction is kept for each seed is differentially private. The
candidates are written from the private seed, every output is derived from exactly one seed,
and the refinement filters read the private seeds; none of that is covered. The empirical audit
(membership-inference AUC, PII replay) is what speaks for the rest.

Steps, as :func:`run_rpsg` runs them:

1. **Mask PII** in every seed (``core.methods.rpsg.pii``: names, e-mails, phones, IDs, dates, URLs, places,
   plus the custodian's patterns and lists). Nothing downstream sees the unmasked seed.
2. **Abstraction.** The local LLM writes ``m`` candidate abstractions per masked seed
   (``rpsg_abstract.txt``, sampled at the run's temperature) that drop specifics but keep
   intent and tone.
3. **DP selection.** Utility u_j = (cos(E(seed), E(candidate_j)) + 1)/2 ∈ [0, 1]; each of the
   m utilities gets Gaussian noise σ = √(2 ln(1.25/δ))/ε (``plan_rpsg``) and the argmax is kept.
   Accounting: releasing all m noisy utilities of one seed is a Gaussian mechanism of L2
   sensitivity √m (each utility can move anywhere in [0, 1]), ρ = m/(2σ²); the argmax is
   post-processing. Each seed's selection reads only that seed (disjoint units), so the stage
   costs ρ once in total (parallel composition), and it is charged before any noise is drawn.
4. **Generation.** From the selected abstraction the LLM writes ``n_variants`` variants
   (``rpsg_variant.txt``), then one final text in their style (``rpsg_final.txt``).
5. **Refinement.** Drop empty outputs; drop outputs whose embedding cosine to *any* masked
   seed exceeds ``similarity_threshold``, for the whole output or any one of its sentences or lines
   (:func:`pieces`: a seed copied in one sentence and followed by the model's comment on its edit is
   no less a copy; the whole output's embedding alone let one through); score the rest by their mean
   per-token NLL under the local LLM and keep those at or above the ``nll_percentile``-th percentile (low NLL = likely
   memorised); finally **mask** any PII the scan still finds (masked, not dropped, so a single
   invented name does not cost a whole text).

The surrogate score is a plain causal-LM NLL under the run's own LLM (teacher-forced through
``start_logits``/``append``); the seed's surrogate fine-tuned on the variants is not
reproduced (ENVIRONMENT.md: no packaged masked-LM; a plain causal-LM NLL is the documented
substitute).

``RPSGResult.stats`` holds counts only (never text). They are computed on private data without
noise: show them to the custodian, do not export them unless the custodian opts in.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.corpus import Unit
from core.common.errors import PrivetError
from core.methods.rpsg.pii import PIIOptions, Recognizer, default_recognizers, mask_pii
from core.models.base import Embedder, LanguageModel
from core.models.scoring import forced_nll, split_message
from core.privacy.planner import STAGE_RPSG_SELECTION
from core.methods.rpsg.plan import RPSGPlan, plan_rpsg
from core.privacy.release import Charge, Unkept, run_release
from core.common.progress import NULL_REPORTER, ProgressEvent, Reporter, StageProgress
from core.common.prompts import render
from core.specs.runspec import RPSGSpec
from core.specs.rules import check_section

STAGE_MASK = "rpsg_mask"
STAGE_ABSTRACT = "rpsg_abstract"
STAGE_SELECT = STAGE_RPSG_SELECTION
STAGE_GENERATE = "rpsg_generate"
STAGE_REFINE = "rpsg_refine"

ABSTRACT_MAX_TOKENS = 96  # abstractions are two or three sentences
NLL_MAX_TOKENS = 256  # outputs are scored on at most this many tokens
N_PREVIEWS = 3

NLLScorer = Callable[[Sequence[str]], np.ndarray]


@dataclass
class RPSGResult:
    """The synthetic texts, the plan that was charged, and counts for the custodian (never text)."""

    texts: list[str]
    stats: dict[str, int] = field(default_factory=dict)
    plan: RPSGPlan | None = None


# -- checks ------------------------------------------------------------------------------------


def check_params(params: RPSGSpec) -> None:
    """Reject settings that cannot run, naming each one: the rules of ``RPSGSpec.RULES``, the only statement of them."""
    check_section(params, "rpsg")


# -- step 1: PII masking -----------------------------------------------------------------------


def mask_seeds(
    units: Sequence[Unit], recognizers: Sequence[Recognizer], reporter: Reporter, stats: Counter
) -> list[str]:
    """Masked seed texts; adds ``seed_pii_<kind>`` counts to ``stats``."""
    progress = StageProgress(reporter, STAGE_MASK, len(units)).start("Masking personal information in the seeds")
    masked = []
    for unit in units:
        text, counts = mask_pii(unit.text, recognizers)
        masked.append(text)
        for kind, count in counts.items():
            stats[f"seed_pii_{kind.lower()}"] += count
        progress.advance()
    progress.finish()
    return masked


# -- step 2: abstraction -----------------------------------------------------------------------


def _batches(n: int, size: int) -> list[range]:
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


def abstract_seeds(
    seeds: Sequence[str], llm: LanguageModel, params: RPSGSpec, reporter: Reporter, batch_size: int
) -> list[list[str]]:
    """``m`` candidate abstractions per seed (n lists of m stripped strings)."""
    progress = StageProgress(reporter, STAGE_ABSTRACT, len(seeds)).start(
        f"Writing {params.m} candidate abstractions per seed"
    )
    progress.check_cancel()
    max_tokens = min(int(params.max_new_tokens), ABSTRACT_MAX_TOKENS)
    candidates: list[list[str]] = []
    for batch in _batches(len(seeds), batch_size):
        messages = [render("rpsg_abstract", text=seeds[i]) for i in batch for _ in range(params.m)]
        outputs = [o.strip() for o in llm.generate(messages, max_tokens, params.temperature)]
        candidates.extend(outputs[k * params.m : (k + 1) * params.m] for k in range(len(batch)))
        progress.advance(len(batch))
    progress.finish()
    return candidates


# -- step 3: DP selection ----------------------------------------------------------------------


def utilities(seed_embeddings: np.ndarray, candidate_embeddings: np.ndarray) -> np.ndarray:
    """u[i, j] = (cos(seed_i, candidate_ij) + 1)/2, clipped to [0, 1]; inputs are L2-normalised.

    ``seed_embeddings`` is [n, d], ``candidate_embeddings`` is [n, m, d]; the result is [n, m].
    """
    cos = np.einsum("nd,nmd->nm", seed_embeddings.astype(np.float64), candidate_embeddings.astype(np.float64))
    return np.clip((cos + 1.0) / 2.0, 0.0, 1.0)


def noisy_argmax(util: np.ndarray, plan: RPSGPlan, rng: np.random.Generator | None) -> np.ndarray:
    """Index of the largest noisy utility in each row (report-noisy-max with Gaussian noise).

    The noise is the plan's selection ``Release``'s (σ, sensitivity √m): with ``rng=None`` (every private run)
    OpenDP's exact sampler, checked against the charged sensitivity; a generator only in the non-private test mode.
    """
    (release,) = plan.releases()
    return np.argmax(release.noise(util, rng), axis=1)


def select_candidates(
    seed_embeddings: np.ndarray,
    candidates: Sequence[Sequence[str]],
    embedder: Embedder,
    plan: RPSGPlan,
    charge: Charge,
    reporter: Reporter,
    rng: np.random.Generator | None,
) -> list[int]:
    """Charge the selection stage, then choose one candidate per seed by noisy argmax (``run_release`` with the
    plan's one Release: utilities → charge → noise; never checkpointed, since each run writes its own candidates)."""
    n, m = len(candidates), plan.m
    progress = StageProgress(reporter, STAGE_SELECT, n).start("Choosing one abstraction per seed (differentially private)")
    progress.check_cancel()
    flat = [c for row in candidates for c in row]
    if len(flat) != n * m:
        raise PrivetError(f"Expected {m} candidates per seed, got {len(flat)} for {n} seeds.", "This is a bug.")

    def exact() -> np.ndarray:
        cand_emb = np.asarray(embedder.embed(flat), dtype=np.float64).reshape(n, m, -1)
        return utilities(seed_embeddings, cand_emb)

    # budget is charged when the stage starts, before any noise exists; the ledger's charge reports it (once)
    chosen = run_release(plan.releases(), Unkept(charge), exact, lambda util: noisy_argmax(util, plan, rng))
    progress.advance(n)
    progress.finish()
    return [int(i) for i in chosen]


# -- step 4: generation ------------------------------------------------------------------------


def _final_prompt(abstraction: str, variants: Sequence[str]) -> str:
    if not variants:
        return render("rpsg_variant", abstraction=abstraction)
    examples = "\n\n".join(f"Example {k + 1}: {v}" for k, v in enumerate(variants))
    return render("rpsg_final", abstraction=abstraction, variants=examples)


def generate_texts(
    abstractions: Sequence[str], llm: LanguageModel, params: RPSGSpec, reporter: Reporter, batch_size: int
) -> list[str]:
    """``n_variants`` variants per abstraction, then one final text each (stripped)."""
    progress = StageProgress(reporter, STAGE_GENERATE, len(abstractions)).start("Writing synthetic texts")
    progress.check_cancel()
    k, finals = int(params.n_variants), []
    for batch in _batches(len(abstractions), batch_size):
        variants: list[list[str]] = [[] for _ in batch]
        if k:
            messages = [render("rpsg_variant", abstraction=abstractions[i]) for i in batch for _ in range(k)]
            outs = [o.strip() for o in llm.generate(messages, params.max_new_tokens, params.temperature)]
            variants = [outs[j * k : (j + 1) * k] for j in range(len(batch))]
        prompts = [_final_prompt(abstractions[i], v) for i, v in zip(batch, variants)]
        finals.extend(o.strip() for o in llm.generate(prompts, params.max_new_tokens, params.temperature))
        progress.advance(len(batch))
    progress.finish()
    return finals


# -- step 5: refinement ------------------------------------------------------------------------


_PIECE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def pieces(text: str) -> list[str]:
    """The text itself and each of its sentences and lines (the parts the similarity filter also embeds)."""
    parts = [p.strip() for p in _PIECE_BREAK.split(text)]
    return [text, *dict.fromkeys(p for p in parts if p and p != text.strip())]


def max_piece_similarity(texts: Sequence[str], seeds: np.ndarray, embedder: Embedder) -> np.ndarray:
    """For each text, the largest cosine of the text or any of its :func:`pieces` to any seed row."""
    split = [pieces(t) for t in texts]
    flat = [p for ps in split for p in ps]
    sims = max_similarity(np.asarray(embedder.embed(flat), dtype=np.float64), seeds)
    ends = np.cumsum([len(ps) for ps in split])
    return np.array([sims[end - len(ps) : end].max() for ps, end in zip(split, ends)])


def max_similarity(outputs: np.ndarray, seeds: np.ndarray, block: int = 1024) -> np.ndarray:
    """For each output row, the largest cosine to any seed row (both L2-normalised)."""
    if len(seeds) == 0:
        return np.full(len(outputs), -1.0)
    best = np.empty(len(outputs), dtype=np.float64)
    for start in range(0, len(outputs), block):
        sims = outputs[start : start + block].astype(np.float64) @ seeds.astype(np.float64).T
        best[start : start + block] = sims.max(axis=1)
    return best


def mean_token_nll(
    llm: LanguageModel, texts: Sequence[str], batch_size: int = 16, max_tokens: int = NLL_MAX_TOKENS
) -> np.ndarray:
    """Mean negative log-likelihood per token of each text, written as a user message, under ``llm``.

    Teacher forcing through the LogitsSession: the template prefix is prefilled, then each
    text's own tokens are appended one step at a time (rows of one batch in lock-step).
    A text with no tokens scores 0.
    """
    empty = llm.chat_prompt_ids([""])[0]
    split = [split_message(empty, ids) for ids in llm.chat_prompt_ids(list(texts))]
    scores = np.zeros(len(texts), dtype=np.float64)
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, (prefix, tokens) in enumerate(split):
        if tokens:
            groups.setdefault(prefix, []).append(i)
    for prefix, members in groups.items():
        for batch in _batches(len(members), batch_size):
            rows = [members[j] for j in batch]
            targets = [split[i][1][:max_tokens] for i in rows]
            scores[rows] = forced_nll(llm, [prefix] * len(targets), targets)
    return scores


def nll_keep_mask(nll: np.ndarray, percentile: float) -> np.ndarray:
    """True where NLL is at or above the ``percentile``-th percentile (low NLL = likely memorised)."""
    if nll.size == 0:
        return np.zeros(0, dtype=bool)
    return nll >= np.percentile(nll, percentile)


def refine(
    texts: Sequence[str],
    seed_embeddings: np.ndarray,
    embedder: Embedder,
    params: RPSGSpec,
    scorer: NLLScorer,
    recognizers: Sequence[Recognizer],
    reporter: Reporter,
    stats: Counter,
) -> list[str]:
    """Empty → similarity → NLL filters, then the final PII masking; counts go into ``stats``."""
    progress = StageProgress(reporter, STAGE_REFINE, 4).start("Filtering the synthetic texts")
    progress.check_cancel()
    kept = [t for t in texts if t.strip()]
    stats["removed_empty"] += len(texts) - len(kept)
    progress.advance(message="empty outputs removed")

    if kept:
        similar = max_piece_similarity(kept, seed_embeddings, embedder) > params.similarity_threshold
        stats["removed_similarity"] += int(similar.sum())
        kept = [t for t, s in zip(kept, similar) if not s]
    progress.advance(message="outputs too similar to a seed removed")

    if kept:
        keep = nll_keep_mask(np.asarray(scorer(kept), dtype=np.float64), params.nll_percentile)
        stats["removed_nll"] += int((~keep).sum())
        kept = [t for t, k in zip(kept, keep) if k]
    progress.advance(message="likely memorised outputs removed")

    final = []
    for text in kept:
        masked, counts = mask_pii(text, recognizers)
        for kind, count in counts.items():
            stats[f"output_pii_{kind.lower()}"] += count
        final.append(masked)
    progress.advance(message="final PII scan done")
    progress.finish()
    return final


# -- the whole method --------------------------------------------------------------------------


def run_rpsg(
    units: Sequence[Unit],
    llm: LanguageModel,
    embedder: Embedder,
    params: RPSGSpec,
    epsilon: float,
    delta: float,
    charge: Charge,
    reporter: Reporter = NULL_REPORTER,
    rng: np.random.Generator | None = None,
    *,
    pii: PIIOptions | None = None,
    conversion: str = "tight",
    batch_size: int = 8,
    scorer: NLLScorer | None = None,
) -> RPSGResult:
    """Run RPSG on ``units`` (see the module docstring for the steps and their scope).

    ``rng`` is for the non-private test mode only (NumPy noise); leave it ``None`` in real runs.
    ``scorer`` replaces the surrogate NLL (default: :func:`mean_token_nll` under ``llm``).
    ``stats`` counts: seeds, seed_pii_<kind>, candidates, generated, removed_empty,
    removed_similarity, removed_nll, output_pii_<kind>, kept; seeds = kept + removed_*.
    """
    check_params(params)
    if batch_size < 1:
        raise PrivetError(f"batch_size must be ≥ 1 (got {batch_size}).", "This is a bug in the caller.")
    plan = plan_rpsg(epsilon, delta, int(params.m), conversion)
    recognizers = default_recognizers(pii)
    score = scorer if scorer is not None else (lambda texts: mean_token_nll(llm, texts))
    stats: Counter = Counter(seeds=len(units))
    if not units:
        return RPSGResult([], _ordered(stats), plan)

    seeds = mask_seeds(units, recognizers, reporter, stats)
    candidates = abstract_seeds(seeds, llm, params, reporter, batch_size)
    stats["candidates"] = sum(len(c) for c in candidates)
    seed_emb = np.asarray(embedder.embed(seeds), dtype=np.float64)
    chosen = select_candidates(seed_emb, candidates, embedder, plan, charge, reporter, rng)
    abstractions = [row[i] for row, i in zip(candidates, chosen)]
    del candidates
    finals = generate_texts(abstractions, llm, params, reporter, batch_size)
    stats["generated"] = len(finals)
    texts = refine(finals, seed_emb, embedder, params, score, recognizers, reporter, stats)
    stats["kept"] = len(texts)
    for text in texts[:N_PREVIEWS]:
        reporter.emit(ProgressEvent(STAGE_REFINE, "preview", message=text))
    return RPSGResult(texts, _ordered(stats), plan)


def _ordered(stats: Counter) -> dict[str, int]:
    base = ["seeds", "candidates", "generated", "removed_empty", "removed_similarity", "removed_nll", "kept"]
    out = {k: int(stats.get(k, 0)) for k in base}
    out.update({k: int(v) for k, v in sorted(stats.items()) if k not in out})
    return out
