"""DP-SynRAG (SPEC §2, seed 000): pay once at build time, query the synthetic corpus for free.

Algorithm 1, as ``run_dp_synrag`` runs it:

0. **Phrase discovery** (docs/method.md §2.0; off with ``discover_phrases = false``): the corpus's own
   frequent 1–3-word phrases are released by DP set union (``phrases.py``) and extend V.
1. **Keyword histogram.** The LLM extracts K single words per unit; they are post-processed
   against the fixed public vocabulary V. h = sum of one-hot keyword sets; release
   h' = h + N(0, sigma_h^2 I_|V|)  (L2 sensitivity sqrt(K)).
2. **Soft clustering.** W = top-R words of h'. Visiting r = R .. 1 (rarest first), C_r holds
   the units whose keywords contain w_r and that are in fewer than L clusters so far.
2b. **Co-keywords** (docs/method.md §2.2b; off with ``cluster_keywords = 0``). Candidates are the
   4R words with the largest noisy counts (public). Each unit of C_r votes for its M most specific
   candidate keywords other than w_r; all clusters' vote counts get N(0, sigma_c^2) on every
   coordinate at once (L2 sensitivity sqrt(L*M)). Each cluster releases its words whose noisy
   count clears the noise level, at most M: the topic's public description.
3. **Retrieval refinement.** mu_r = sum of the members' embeddings + N(0, sigma_mu^2 I);
   theta_r by the exponential mechanism over intervals of [0, 1] with utility
   -|#{u : cos(E(u), mu_r) >= theta} - k|; S_r = members with cos >= theta_r.
4. **Private prediction.** Without refinement S_r is a Poisson subsample of C_r at
   q_r = min(1, k / h'(w_r)) (released counts only; docs/method.md §2.4.8), so a group has about k
   rows whatever the corpus size, at no extra cost. Each S_r writes one text token by token from the sum of its
   members' clipped logits (``PrivatePredictionEngine``), sampling over the whole vocabulary
   (or over Top-k+, a candidate set from the public row's logits alone). The public row's
   stand-in document holds w_r and its released co-keywords only.
5. **Self-filter.** The LLM keeps synthetic texts it judges useful for the public task
   (synthetic and public text only: post-processing).

The budget of each DP stage is charged (``charge``) *before* that stage draws anything.
Steps 2–4 run on every cluster; each unit lies in at most L of them and membership depends
only on the unit and the released W, so they cost L times one cluster's budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from core.corpus import Unit
from core.methods.base import MethodContext, SyntheticDoc, UnitWork
from core.methods.dp_synrag.cluster_index import cluster_keyword_counts_indexed, soft_clusters_indexed
from core.methods.dp_synrag.row_bound import cluster_counts, poisson_subsample, subsample_rates
from core.methods.dp_synrag.phrases import PublicLists, extend_vocabulary, release_phrases
from core.methods.dp_synrag.realisation import (
    Topic,
    clean_draft,
    example_lead,
    form_rewrite_message,
    guarantee_words,
    public_example,
    realise,
)
from core.methods.private_prediction.self_filter import run_self_filter
from core.methods.dp_synrag.vocabulary import Vocabulary, english_zipf, postprocess_keywords, specific_entries
from core.methods.private_prediction import (
    EngineConfig,
    PredictionGroup,
    PrivatePredictionEngine,
    top_k_plus_margin,
)
from core.models.base import LanguageModel
from core.privacy.forecast import significance_threshold  # the public topic threshold (one home: forecast)
from core.privacy.mechanisms import threshold_exponential_mechanism
from core.privacy.planner import (
    STAGE_CLUSTER_KEYWORDS,
    STAGE_HISTOGRAM,
    STAGE_MEAN,
    STAGE_THRESHOLD,
    STAGE_TOKENS,
    DPSynRAGPlan,
    PredictionCost,
    dp_synrag_prediction_cost,
)
from core.privacy.release import Release, run_release
from core.progress import ProgressEvent, StageProgress
from core.prompts import render
from core.runspec import DPSynRAGSpec


CHECKPOINT_HISTOGRAM = "histogram"  # the checkpoint names of old runs: a resume reads them
CHECKPOINT_RETRIEVAL = "retrieval"


@dataclass
class DPSynRAGResult:
    documents: list[SyntheticDoc]
    # On-screen diagnostics for the custodian only: computed on private data, never exported.
    private_diagnostics: dict[str, int] = field(default_factory=dict)


# -- Step 1: keyword histogram -------------------------------------------------------------


def extract_keywords(
    units: Sequence[Unit], llm: LanguageModel, vocab: Vocabulary, K: int, ctx: MethodContext, extractor: str = "llm"
) -> list[list[str]]:
    """Per-unit keyword sets: at most K entries of the public V, each from its own unit only.

    ``"llm"`` (the paper): the LLM lists K keywords (greedy decoding, so a resumed run recomputes
    the same sets), post-processed against V. ``"vocabulary"``: the K entries of V in the unit's
    text that are rarest in general English (:func:`core.methods.dp_synrag.vocabulary.specific_entries`); no model
    call, and robust with small models, which tend to echo the document instead of listing
    keywords.
    """
    if extractor not in ("vocabulary", "llm"):
        raise ValueError(f"unknown keyword extractor {extractor!r}")
    progress = StageProgress(ctx.reporter, "keywords", len(units)).start("Finding each document's keywords")
    keywords: list[list[str]] = []
    if extractor == "vocabulary":
        for unit in units:
            keywords.append(specific_entries(unit.text, vocab, K))
            progress.advance(1)
    else:
        prompts = [render("keywords", K=K, document=_truncate(u.text)) for u in units]
        answers = generate_greedy(prompts, llm, ctx.unit_work, 6 * K + 4, progress)
        keywords = [postprocess_keywords(a, vocab, K) for a in answers]
    progress.finish()
    return keywords


def generate_greedy(
    messages: Sequence[str],
    llm: LanguageModel,
    unit_work: UnitWork | None,
    max_new_tokens: int,
    progress: StageProgress,
    batch: int = 16,  # decoding is memory-bound: wider batches cost little more per step
) -> list[str]:
    """Greedy answers, ``batch`` messages per model call: here, or sharded over compute workers
    (``core.compute``) in the same batches, so with the same answers."""
    if unit_work is not None:
        return unit_work.generate(messages, max_new_tokens, batch, progress)
    answers: list[str] = []
    for start in range(0, len(messages), batch):
        chunk = list(messages[start : start + batch])
        answers.extend(llm.generate(chunk, max_new_tokens=max_new_tokens, temperature=0.0))
        progress.advance(len(chunk))
    return answers


def keyword_histogram(keywords: Sequence[Sequence[str]], vocab: Vocabulary) -> np.ndarray:
    """h = sum over units of the one-hot vector of the unit's keyword set (|V| entries)."""
    h = np.zeros(len(vocab.words), dtype=np.float64)
    for words in keywords:
        for word in set(words):
            h[vocab.index[word]] += 1.0
    return h


def release_histogram(
    keywords: Sequence[Sequence[str]], vocab: Vocabulary, plan: DPSynRAGPlan, ctx: MethodContext
) -> np.ndarray:
    """h' = h + N(0, sigma_h^2 I): the checkpoint, or charged, counted, noised and saved (``run_release``)."""
    stage = plan.release(STAGE_HISTOGRAM)
    return run_release(
        stage, ctx, CHECKPOINT_HISTOGRAM, lambda: keyword_histogram(keywords, vocab),
        noise=lambda h: stage.noise(h, ctx.test_rng()), dump=lambda h: h.tolist(), load=np.asarray,
    )


def top_words(noisy_hist: np.ndarray, vocab: Vocabulary, R: int) -> list[str]:
    """W: the R words with the largest noisy counts, most frequent first (post-processing)."""
    order = np.argsort(-noisy_hist, kind="stable")[:R]
    return [vocab.words[i] for i in order]


def topic_words(noisy_hist: np.ndarray, vocab: Vocabulary, R: int, sigma_h: float, mode: str = "specific") -> list[str]:
    """W, the cluster words, chosen from the released histogram by post-processing only.

    ``"frequent"`` (SPEC §2.2 as written): the R largest noisy counts. ``"specific"``: among the
    words whose noisy count clears :func:`significance_threshold` (so the word is supported by
    real units, not noise), the R most *specific* ones by their public English frequency
    (:func:`core.methods.dp_synrag.vocabulary.english_zipf`): a disease or product name makes a topic, "weeks" or
    "patient" do not. Either way W is returned most frequent first, the order SPEC §2.2 visits
    from the end (rarest first). Fewer than R words may clear the threshold; then W is shorter.
    """
    if mode == "frequent":
        return top_words(noisy_hist, vocab, R)
    if mode != "specific":
        raise ValueError(f"unknown topic word mode {mode!r}")
    significant = np.flatnonzero(noisy_hist >= significance_threshold(sigma_h, len(vocab))).tolist()
    significant.sort(key=lambda i: (english_zipf(vocab.words[i]), -noisy_hist[i]))
    chosen = sorted(significant[:R], key=lambda i: -noisy_hist[i])
    return [vocab.words[i] for i in chosen]


# -- Step 2: soft clustering ---------------------------------------------------------------


def soft_clusters(keywords: Sequence[Sequence[str]], W: Sequence[str], L: int) -> list[list[int]]:
    """C_1..C_R (indices into the units), built rarest word first; each unit in <= L clusters.

    C_r takes, in unit order, every unit whose keywords contain w_r and that is in fewer than L
    clusters so far (an inverted index reads each unit once: ``cluster_index``)."""
    return soft_clusters_indexed(keywords, W, L)


# -- Step 2b: co-keywords of each cluster ---------------------------------------------------

CANDIDATES_PER_CLUSTER = 4  # the co-keyword candidates are the 4R words with the largest noisy counts


def cluster_keyword_candidates(noisy_hist: np.ndarray, vocab: Vocabulary, R: int) -> list[str]:
    """The words a cluster may release as co-keywords: the ``4R`` largest noisy counts (post-processing
    of the released histogram, so public), most frequent first."""
    return top_words(noisy_hist, vocab, CANDIDATES_PER_CLUSTER * R)


def cluster_keyword_votes(unit_keywords: Sequence[str], word: str, candidates: dict[str, int], M: int) -> list[int]:
    """Which candidates one unit votes for in the cluster of ``word``: its M most specific candidate
    keywords other than ``word`` (rarest in general English first). A function of the unit and of
    public values only, so one unit casts at most M votes in each of its at most L clusters."""
    mine = sorted({w for w in unit_keywords if w in candidates and w != word}, key=lambda w: (english_zipf(w), w))
    return [candidates[w] for w in mine[:M]]


def cluster_keyword_counts(
    keywords: Sequence[Sequence[str]], clusters: Sequence[Sequence[int]], W: Sequence[str], candidates: Sequence[str],
    M: int,
) -> np.ndarray:
    """The R × |candidates| vote counts (one row per cluster): each member of C_r votes as
    :func:`cluster_keyword_votes` says (each unit's candidates ranked once: ``cluster_index``).
    Adding or removing one unit changes at most M entries in each of at most L rows, by 1 each:
    L2 sensitivity sqrt(L·M)."""
    return cluster_keyword_counts_indexed(keywords, clusters, W, candidates, M, english_zipf)


def release_cluster_keywords(
    keywords: Sequence[Sequence[str]], clusters: Sequence[Sequence[int]], W: Sequence[str], candidates: Sequence[str],
    plan: DPSynRAGPlan, ctx: MethodContext,
) -> np.ndarray:
    """The checkpoint, or charge, then add N(0, sigma_c^2) to every entry of the count matrix (zeros included)."""
    stage = plan.release(STAGE_CLUSTER_KEYWORDS)
    return run_release(
        stage, ctx, STAGE_CLUSTER_KEYWORDS, lambda: cluster_keyword_counts(keywords, clusters, W, candidates, plan.M),
        noise=lambda counts: stage.noise(counts, ctx.test_rng()),
        dump=lambda noisy: noisy.tolist(),
        load=lambda saved: np.asarray(saved, dtype=np.float64).reshape(len(W), len(candidates)),
    )


CO_KEYWORD_MARGIN_SIGMAS = 1.0  # above the typical maximum of all R·|candidates| pure-noise draws


def co_keyword_level(sigma_c: float, n_clusters: int, n_candidates: int, margin_sigmas: float = CO_KEYWORD_MARGIN_SIGMAS) -> float:
    """The noisy count a co-keyword must reach: sigma_c·(sqrt(2 ln N) + margin), N = R·|candidates| — the
    typical largest of *all* clusters' pure-noise draws plus a margin, so that across every cluster pure
    noise releases about N·Φ̄(sqrt(2 ln N) + margin) words (≈ 0.001 for N = 2,000). Public: σ_c, R, |candidates|."""
    draws = max(int(n_clusters) * int(n_candidates), 2)
    return sigma_c * (math.sqrt(2.0 * math.log(draws)) + margin_sigmas)


def released_cluster_keywords(noisy_counts: np.ndarray, candidates: Sequence[str], M: int, sigma_c: float) -> list[list[str]]:
    """Per cluster, the co-keywords its noisy counts support (post-processing): at most M words whose
    noisy count reaches :func:`co_keyword_level`, which pure noise rarely reaches in any cluster, so a
    word released is very likely used by the cluster's units. Most frequent first."""
    if noisy_counts.size == 0:
        return [[] for _ in range(noisy_counts.shape[0])]
    level = co_keyword_level(sigma_c, noisy_counts.shape[0], len(candidates))
    released = []
    for row in noisy_counts:
        order = np.argsort(-row, kind="stable")[:M]
        released.append([candidates[j] for j in order if row[j] >= level])
    return released


# -- Step 3: retrieval refinement ----------------------------------------------------------


def refine_cluster(
    member_embeddings: np.ndarray, total: np.ndarray, mean: Release, eps_theta: float, k: int, ctx: MethodContext
) -> tuple[list[float], float]:
    """Noisy sum mu_r of the members' embeddings ``total`` (Delta = 1) and threshold theta_r (exponential mechanism)."""
    mu = mean.noise(total, ctx.test_rng())
    sims = cosine_to(member_embeddings, mu)
    theta = threshold_exponential_mechanism(sims, k, eps_theta, rng=ctx.test_rng())
    return mu.tolist(), float(theta)


def cosine_to(embeddings: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """cos(E(u), mu) for L2-normalised rows E(u)."""
    norm = float(np.linalg.norm(centre))
    if len(embeddings) == 0 or norm == 0.0:
        return np.zeros(len(embeddings))
    return embeddings @ (np.asarray(centre) / norm)


def release_retrieval(
    clusters: Sequence[Sequence[int]],
    embeddings: np.ndarray,
    plan: DPSynRAGPlan,
    spec: DPSynRAGSpec,
    ctx: MethodContext,
) -> list[dict]:
    """Each cluster's noisy centre and threshold: the checkpoint, or both stages charged, then drawn."""
    mean = plan.release(STAGE_MEAN)

    def refine_all(totals: list[np.ndarray]) -> list[dict]:
        progress = StageProgress(ctx.reporter, "retrieval", len(clusters)).start("Refining clusters")
        released = []
        for members, total in zip(clusters, totals):
            mu, theta = refine_cluster(embeddings[list(members)], total, mean, plan.eps_theta, spec.k, ctx)
            released.append({"mu": mu, "theta": theta})
            progress.advance()
        progress.finish()
        return released

    def sums() -> list[np.ndarray]:
        dim = embeddings.shape[1]
        return [embeddings[list(m)].sum(axis=0) if len(m) else np.zeros(dim) for m in clusters]

    scope = f"{len(clusters)} clusters, each unit in <= L={plan.L}"
    stages = [mean, plan.release(STAGE_THRESHOLD)]
    return run_release(stages, ctx, CHECKPOINT_RETRIEVAL, sums, refine_all, detail=scope)


def select_members(
    members: Sequence[int], embeddings: np.ndarray, mu: Sequence[float], theta: float
) -> list[int]:
    """S_r = members whose cosine to mu_r is at least theta_r."""
    sims = cosine_to(embeddings[list(members)], np.asarray(mu))
    return [u for u, s in zip(members, sims) if s >= theta]


# -- Step 4: private prediction ------------------------------------------------------------


def rephrase_message(document: str) -> str:
    """A private row's message: the seed's rephrase instruction around the unit's own document."""
    return render("rephrase", document=document)


def bounded_rows(
    clusters: Sequence[Sequence[int]], noisy_counts: Sequence[float], spec: DPSynRAGSpec, ctx: MethodContext
) -> list[list[int]]:
    """The rows of each group without refinement: all of C_r (``row_bound = "none"``), or a Poisson
    subsample at q_r = min(1, k / h'(w_r)) from released counts only (``"poisson"``, docs/method.md
    §2.4.8). Costs nothing extra: one unit still adds or removes at most its own row per group."""
    if spec.row_bound == "none":
        return [list(members) for members in clusters]
    if spec.row_bound != "poisson":
        raise ValueError(f"unknown row bound {spec.row_bound!r}")
    return poisson_subsample(clusters, subsample_rates(noisy_counts, spec.k), ctx.rng())


def build_groups(
    selected: Sequence[Sequence[int]],
    units: Sequence[Unit],
    ctx: MethodContext,
    public_messages: Sequence[str] | None = None,
    answer_starts: Sequence[str] | None = None,
    private_message: Callable[[str], str] = rephrase_message,
) -> list[PredictionGroup]:
    """One prediction group per cluster: a rephrase prompt per member, plus the public row.

    ``public_messages[r]`` is group r's public message (built by :func:`public_message` from
    released or public text only), or None for no public row. ``answer_starts[r]`` is a public
    text every row of group r (private and public alike) already has as the start of its answer
    (:func:`answer_start`); the synthetic text begins with it.
    """
    llm = ctx.llm
    prompt_cache: dict[int, tuple[int, ...]] = {}

    def prompt_of(u: int) -> tuple[int, ...]:
        if u not in prompt_cache:
            message = private_message(units[u].text)
            prompt_cache[u] = tuple(llm.chat_prompt_ids([message], ctx.max_prompt_tokens)[0])
        return prompt_cache[u]

    publics: list[tuple[int, ...]] = [()] * len(selected)
    if public_messages is not None:
        distinct = sorted(set(public_messages))
        ids = dict(zip(distinct, llm.chat_prompt_ids(distinct, ctx.max_prompt_tokens)))
        publics = [tuple(ids[m]) for m in public_messages]
    starts: list[tuple[int, ...]] = [()] * len(selected)
    if answer_starts is not None:
        starts = [tuple(llm.chat.tokenizer.encode(a, add_special_tokens=False)) if a else () for a in answer_starts]
    return [
        PredictionGroup(
            gid=r,
            prompt_ids=tuple(prompt_of(u) + starts[r] for u in members),
            public_prompt_ids=publics[r] + starts[r] if publics[r] else (),
            start_ids=starts[r],
        )
        for r, members in enumerate(selected)
    ]


def answer_start(mode: str, keyword: str, related: Sequence[str] = ()) -> str:
    """The public start of cluster r's synthetic text: its released keyword w_r (``"keyword"``),
    w_r with its released co-keywords (``"keywords"``), or nothing."""
    if mode == "none" or not keyword:
        return ""
    if mode == "keyword" or (mode == "keywords" and not related):
        return render("answer_start", keyword=keyword).rstrip("\n")
    if mode == "keywords":
        return render("answer_start_keywords", keyword=keyword, related=", ".join(related)).rstrip("\n")
    raise ValueError(f"unknown answer start mode {mode!r}")


def stand_in_document(keyword: str, related: Sequence[str], task: str) -> str:
    """The public row's stand-in document: released words and the public task only."""
    if related:
        return render("public_document_keywords", keyword=keyword, related=", ".join(related), task=task).rstrip("\n")
    return render("public_document", keyword=keyword, task=task).rstrip("\n")


def public_message(mode: str, task: str, keyword: str = "", related: Sequence[str] = ()) -> str | None:
    """The public row's message (docs/method.md §2.4): no private text, ever.

    ``"empty"``: the rephrase instruction around an empty document. ``"keyword"``: the same
    instruction around a public *stand-in* document built from the cluster's released keyword
    w_r, its released co-keywords (step 2b) and the public task description, so that the public
    row mirrors the private rows' prompt and differs from them only where the documents do.
    ``"none"``: no public row.
    """
    if mode == "none":
        return None
    if mode == "empty" or not keyword:
        return render("rephrase", document="")
    if mode == "keyword":
        return render("rephrase", document=stand_in_document(keyword, related, task))
    raise ValueError(f"unknown public prompt mode {mode!r}")


PREFIX_PROBES = ("a", "Z", "0", "(", "-", "\n", " x", "É", "#")  # public documents of every kind of first character


def template_prefix_length(llm: LanguageModel, private_message: Callable[[str], str] = rephrase_message) -> int:
    """How many first tokens every rephrase prompt takes from the public template (chat template and
    instruction before the document), found from public probe documents only, minus one token in
    case a document's first characters merge with the template's last token. Never computed from
    the private prompts, so sharing these tokens makes no row's computation depend on another row."""
    prompts = llm.chat_prompt_ids([private_message(p) for p in PREFIX_PROBES])
    common = 0
    while all(len(p) > common for p in prompts) and len({p[common] for p in prompts}) == 1:
        common += 1
    return max(0, common - 1)


def engine_config(spec: DPSynRAGSpec, c: float, batch_rows: int, shared_prefix: int = 0) -> EngineConfig:
    """The private-prediction engine's settings from the run spec (DClip, public row, Top-k+)."""
    anchored = spec.public_row != "none" or spec.text == "realised+private"  # there the draft is the public row
    margin = top_k_plus_margin(c, spec.public_weight, spec.tau, spec.k) if spec.top_k_plus else 0.0
    return EngineConfig(
        max_new_tokens=spec.T,
        clip=c,
        tau=spec.tau,
        max_rows=batch_rows,
        public_anchor=anchored,
        clip_mode=spec.clip,
        public_weight=spec.public_weight,
        top_k_plus=spec.top_k_plus,
        top_k_margin=margin,
        shared_prefix=shared_prefix,
        force_length=spec.force_length,
    )


@dataclass(frozen=True)
class GroupSource:
    """Groups built only once the private-prediction stage is charged: ``build(gids)`` returns the
    groups of those ids (drawing their rows, e.g. the Poisson subsample of §2.4.8, inside the stage)."""

    gids: tuple[int, ...]
    build: Callable[[Sequence[int]], list[PredictionGroup]]


def private_prediction(
    groups: Sequence[PredictionGroup] | GroupSource,
    release: Release,
    cost: PredictionCost,
    spec: DPSynRAGSpec,
    ctx: MethodContext,
    private_message: Callable[[str], str] = rephrase_message,
) -> dict[int, str]:
    """Texts for the groups not yet finished in the checkpoint; checkpoints each finished one.

    The one stage that checkpoints as it goes: charged when it starts (``release.charge``), and on a
    resume only for the groups drawn again (``cost.charge``)."""
    stage = release.stage
    done: dict[str, str] = ctx.checkpoints.load(stage) if ctx.checkpoints.has(stage) else {}
    gids = list(groups.gids) if isinstance(groups, GroupSource) else [g.gid for g in groups]
    todo_ids = [gid for gid in gids if str(gid) not in done]
    progress = StageProgress(ctx.reporter, stage, len(gids)).start("Writing synthetic documents")
    progress.done = len(gids) - len(todo_ids)
    # Charged when the stage starts, even with no group to write (the plan, the ledger and the
    # certificate then agree); on a resume only if some group must be written again.
    if todo_ids or not ctx.checkpoints.has(stage):
        release.charge(
            ctx.charge,
            cost.charge(len(todo_ids), resumed=bool(done)),  # the plan's cost; a resume charges redrawn groups
            f"{len(todo_ids)} groups, each unit in <= L={cost.overlap}",
        )
        ctx.checkpoints.save(stage, done)  # after the charge: a checkpoint means "charged"
        wanted = set(todo_ids)
        todo = groups.build(todo_ids) if isinstance(groups, GroupSource) else [g for g in groups if g.gid in wanted]
        config = engine_config(spec, cost.c, ctx.batch_rows, template_prefix_length(ctx.llm, private_message))
        engine = (ctx.engine_factory or PrivatePredictionEngine)(ctx.llm, config, ctx.token_sampler(spec.tau))

        starts = {g.gid: list(g.start_ids) for g in todo}

        def finished(out) -> None:
            text = ctx.llm.decode(starts.get(out.gid, []) + out.token_ids).strip()
            done[str(out.gid)] = text
            ctx.checkpoints.save(stage, done)
            ctx.reporter.emit(ProgressEvent(stage, "preview", message=text))

        engine.run(todo, progress, finished)
    progress.finish()
    return {int(gid): text for gid, text in done.items()}


def group_source(
    selected: list[list[int]],
    noisy_counts: Sequence[float],
    units: Sequence[Unit],
    spec: DPSynRAGSpec,
    plan: DPSynRAGPlan,
    ctx: MethodContext,
    messages: Sequence[str] | None,
    starts: Sequence[str],
    private_message: Callable[[str], str] = rephrase_message,
) -> GroupSource:
    """The prediction groups, built by ``private_prediction`` only after its charge, so that the row
    bound's subsample (docs/method.md §2.4.8) is drawn inside the stage. ``selected[r]`` is updated to
    the rows group r actually wrote with (on-screen diagnostics)."""

    def build(gids: Sequence[int]) -> list[PredictionGroup]:
        rows = [selected[r] for r in gids]
        if not plan.refine:
            rows = bounded_rows(rows, [noisy_counts[r] for r in gids], spec, ctx)
        for r, chosen in zip(gids, rows):
            selected[r] = chosen
        built = build_groups(
            rows, units, ctx, None if messages is None else [messages[r] for r in gids], [starts[r] for r in gids],
            private_message,
        )
        return [replace(g, gid=r) for g, r in zip(built, gids)]

    return GroupSource(tuple(range(len(selected))), build)


def write_texts(
    units: Sequence[Unit],
    W: Sequence[str],
    related: Sequence[Sequence[str]],
    selected: list[list[int]],
    noisy_counts: Sequence[float],
    spec: DPSynRAGSpec,
    plan: DPSynRAGPlan,
    ctx: MethodContext,
) -> dict[int, str]:
    """Each cluster's text, as ``[dp_synrag] text`` says (docs/method.md §2.4 and §2.6).

    Only "private" and "realised+private" read private documents (step 4, charged when it starts);
    "topic_line" and "realised" are post-processing of the released topics.
    """
    if spec.text == "topic_line":
        mode = spec.answer_start if spec.answer_start != "none" else "keywords"
        return {r: answer_start(mode, w, rel) for r, (w, rel) in enumerate(zip(W, related))}
    if spec.text == "private":
        messages = (
            [public_message(spec.public_row, ctx.task, w, rel) for w, rel in zip(W, related)]
            if spec.public_row != "none"
            else None
        )
        starts = [answer_start(spec.answer_start, w, rel) for w, rel in zip(W, related)]
        groups = group_source(selected, noisy_counts, units, spec, plan, ctx, messages, starts)
        return private_prediction(groups, plan.release(STAGE_TOKENS), dp_synrag_prediction_cost(plan), spec, ctx)
    topics = [Topic(w, tuple(rel)) for w, rel in zip(W, related)]
    example = public_example(spec.document_form, spec.public_example)
    drafts = realise(topics, ctx.task, example, ctx.llm, ctx.reporter, spec.realisation_tokens,
                     max_prompt_tokens=ctx.max_prompt_tokens)
    if spec.text == "realised":
        return {r: d.text for r, d in enumerate(drafts)}
    # "realised+private": the draft is the public row; every member rewrites its own document in the same form.
    rewrite = form_rewrite_message(example)
    lead = example_lead(example)
    groups = group_source(
        selected, noisy_counts, units, spec, plan, ctx, [rewrite(d.text) for d in drafts], [lead] * len(drafts), rewrite
    )
    texts = private_prediction(
        groups, plan.release(STAGE_TOKENS), dp_synrag_prediction_cost(plan), spec, ctx, private_message=rewrite
    )
    return {r: guarantee_words(clean_draft(t), topics[r].words)[0] for r, t in texts.items()}


# -- Step 5: self-filter -------------------------------------------------------------------


def self_filter(texts: dict[int, str], task: str, ctx: MethodContext, mode: str = "score") -> dict[int, str]:
    """Keep texts judged useful for the public task (post-processing: free; see self_filter.py)."""
    return run_self_filter(texts, task, ctx.llm, ctx.embedder, ctx.reporter, mode).kept


# -- Algorithm 1 ---------------------------------------------------------------------------


def run_dp_synrag(
    units: Sequence[Unit],
    vocab: Vocabulary,
    spec: DPSynRAGSpec,
    plan: DPSynRAGPlan,
    ctx: MethodContext,
) -> DPSynRAGResult:
    if plan.discovers_phrases:  # step 0: charged and checkpointed inside; a resume reuses the phrases
        lists = PublicLists.shipped(vocab)
        vocab = extend_vocabulary(vocab, release_phrases(units, lists, plan, ctx), lists)
    keywords = extract_keywords(units, ctx.llm, vocab, spec.K, ctx, spec.keywords)

    noisy_hist = release_histogram(keywords, vocab, plan, ctx)
    W = topic_words(noisy_hist, vocab, spec.R, plan.sigma_h, spec.topic_words)
    clusters = soft_clusters(keywords, W, spec.L)
    related: list[list[str]] = [[] for _ in W]
    if plan.M:
        candidates = cluster_keyword_candidates(noisy_hist, vocab, spec.R)
        noisy_counts = release_cluster_keywords(keywords, clusters, W, candidates, plan, ctx)
        related = released_cluster_keywords(noisy_counts, candidates, plan.M, plan.sigma_c)

    if not plan.refine:  # no refinement: each cluster writes with its members (about k of them: §2.4.8)
        selected = [list(members) for members in clusters]
    else:
        progress = StageProgress(ctx.reporter, "embedding", len(units)).start("Embedding documents")
        if ctx.unit_work is not None:  # sharded over compute workers (core/compute)
            embeddings = ctx.unit_work.embed([u.text for u in units], progress=progress)
        else:
            embeddings = ctx.embedder.embed([u.text for u in units])
            progress.advance(len(units))
        progress.finish()
        released = release_retrieval(clusters, embeddings, plan, spec, ctx)
        selected = [
            select_members(members, embeddings, rel["mu"], rel["theta"]) for members, rel in zip(clusters, released)
        ]

    topic_counts = cluster_counts(noisy_hist, vocab.index, W)  # h'(w_r), released: the row bound's rates
    texts = write_texts(units, W, related, selected, topic_counts, spec, plan, ctx)
    if spec.self_filter:
        kept = self_filter(texts, ctx.task, ctx, spec.self_filter_mode)
    else:
        kept = {g: t for g, t in texts.items() if t.strip()}

    documents = [SyntheticDoc(id=f"syn-{gid:04d}", text=text, group=gid) for gid, text in sorted(kept.items())]
    diagnostics = {
        "clusters": len(clusters),
        "low_signal_clusters": sum(1 for s in selected if len(s) < spec.min_cluster_size),
        "empty_clusters": sum(1 for s in selected if not s),
        "generated": len(texts),
        "kept_after_self_filter": len(documents),
    }
    return DPSynRAGResult(documents, diagnostics)


def _truncate(text: str, limit: int = 2000) -> str:
    return text[:limit]
