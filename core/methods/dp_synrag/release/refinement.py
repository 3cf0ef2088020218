"""Step 3 (docs/method.md §2.3): retrieval refinement of each cluster.

mu_r = sum of the members' embeddings + N(0, σ_μ² I) (Δ = 1); θ_r by the exponential mechanism over
intervals of [0, 1] with utility −|#{u : cos(E(u), mu_r) ≥ θ} − k|; S_r = members with cos ≥ θ_r. Both
run on every cluster and are charged together, L times one cluster's cost.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.privacy.mechanisms import threshold_exponential_mechanism
from core.privacy.planner import STAGE_MEAN, STAGE_THRESHOLD
from core.privacy.release import Release, run_release
from core.common.progress import StageProgress
from core.specs.runspec import DPSynRAGSpec


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
    return run_release(stages, ctx, sums, refine_all, detail=scope)


def select_members(
    members: Sequence[int], embeddings: np.ndarray, mu: Sequence[float], theta: float
) -> list[int]:
    """S_r = members whose cosine to mu_r is at least theta_r."""
    sims = cosine_to(embeddings[list(members)], np.asarray(mu))
    return [u for u, s in zip(members, sims) if s >= theta]


def embed_units(units: Sequence[Unit], ctx: MethodContext) -> np.ndarray:
    """E(u) for every unit (L2-normalised): here, or sharded over compute workers (core/compute)."""
    progress = StageProgress(ctx.reporter, "embedding", len(units)).start("Embedding documents")
    embeddings = ctx.compute.unit_work.embed(ctx.embedder, [u.text for u in units], progress=progress)
    progress.finish()
    return embeddings


def refine(
    units: Sequence[Unit], clusters: Sequence[Sequence[int]], spec: DPSynRAGSpec, plan: DPSynRAGPlan,
    ctx: MethodContext,
) -> list[list[int]]:
    """Step 3: S_r, the members of C_r close to its noisy centre; without refinement S_r = C_r (whose rows
    the row bound of step 4 subsamples to about k: docs/method.md §2.4.8)."""
    if not plan.refine:
        return [list(members) for members in clusters]
    embeddings = embed_units(units, ctx)
    released = release_retrieval(clusters, embeddings, plan, spec, ctx)
    return [select_members(members, embeddings, rel["mu"], rel["theta"]) for members, rel in zip(clusters, released)]
