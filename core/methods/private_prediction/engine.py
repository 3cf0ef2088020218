"""The batched private-prediction engine (docs/method.md §2.4), shared by DP-SynRAG and DP-Synth.

Each *group* (a DP-SynRAG cluster S_r, or a DP-Synth random batch) writes one synthetic
text. Every member unit of the group contributes one *row*: its own prompt, prefilled once
into a KV cache. At every step:

1. every row's next-token logits l_u are clipped on the device (``clip_logits``): each
   entry ends in [-c, c], so one unit moves the aggregate by at most c per token;
2. the clipped rows are summed per group with ``index_add_`` (z_n = sum over the group);
3. one token per group is sampled from softmax(z_n / tau) over the **whole vocabulary**
   (``TokenSampler``; no top-k, top-p or any other data-dependent truncation);
4. that token is appended to every row of its group; groups that emit EOS or reach T
   tokens leave the batch (their rows are dropped from the cache).

Rows from many groups share one batch; groups are packed into *waves* whose total row count
fits a memory budget. On CUDA out-of-memory the wave size is halved and the wave restarts
from its prompts; the tokens it had drawn were never released, and the caller charged the
whole stage before it started, so the accounting is unchanged.

Optional public anchoring (InvisibleInk, arXiv 2507.02974; docs/method.md §2.4): one extra
*public* row per group holds a prompt with no private document (the same rephrase instruction
around an empty document, or around a stand-in built from the cluster's released keyword and
the public task). Two ways to combine it with the private rows:

* ``clip = "spec"`` (the SPEC anchoring, docs/method.md §2.4.3): each private row contributes the SPEC clip of
  l_u - l_pub, and tau * log_softmax(l_pub) is added as a base;
* ``clip = "dclip"`` (DClip): each private row contributes clamp(log p_u - log p_pub, -C, C) on
  the *un-normalised scale* (log-probabilities, i.e. raw logits up to each row's own constant),
  and the public base is lambda * tau * log p_pub with lambda a public constant.

Either way one unit moves every coordinate of z by at most c (= C), so the per-token cost stays
(c/tau)^2 / 2. With a public row, ``top_k_plus`` restricts sampling to V_k+: the k tokens with
the largest public log-probability plus every token within ``top_k_margin`` of the k-th. V_k+
is a function of the public logits only, so sampling exactly over it (tokens outside get
z = -inf, i.e. probability 0) is an exponential mechanism over a public candidate set with the
same cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from core.models.base import LanguageModel, LogitsSession
from core.privacy.mechanisms import TokenSampler, clip_logits
from core.common.progress import StageProgress


@dataclass(frozen=True)
class PredictionGroup:
    """One group of units that jointly writes one synthetic text.

    ``prompt_ids`` holds one tokenised prompt per member unit; ``public_prompt_ids`` is the
    same prompt without any document (used only with public anchoring).
    """

    gid: int
    prompt_ids: tuple[tuple[int, ...], ...]
    public_prompt_ids: tuple[int, ...] = ()
    start_ids: tuple[int, ...] = ()  # a public answer start already at the end of every row's prompt


CLIP_MODES = ("spec", "dclip")


@dataclass(frozen=True)
class EngineConfig:
    max_new_tokens: int  # T
    clip: float  # c
    tau: float  # temperature
    max_rows: int = 256  # rows held in one wave's KV cache
    public_anchor: bool = False  # every group carries one public row (its public_prompt_ids)
    clip_mode: str = "spec"  # "spec" (docs/method.md §2.4 clip) or "dclip" (clamped log-probability differences)
    public_weight: float = 1.0  # lambda: weight of the public base (public constant, never |S_r|)
    top_k_plus: int = 0  # 0 = whole vocabulary; k > 0 = sample over V_k+ from the public logits
    top_k_margin: float = 0.0  # V_k+ margin on the public log-probabilities (public quantities only)
    shared_prefix: int = 0  # first tokens every prompt takes from the public template (0 = share none)
    force_length: bool = False  # EOS tokens get probability 0: every group writes exactly T tokens

    def __post_init__(self) -> None:
        if self.clip_mode not in CLIP_MODES:
            raise ValueError(f"clip_mode must be one of {CLIP_MODES}, got {self.clip_mode!r}")
        if (self.clip_mode == "dclip" or self.top_k_plus) and not self.public_anchor:
            raise ValueError("DClip and Top-k+ need a public row per group (public_anchor=True)")
        if self.force_length and self.top_k_plus:
            raise ValueError("force_length and Top-k+ do not combine (V_k+ may hold only EOS tokens)")


@dataclass
class GroupOutput:
    gid: int
    token_ids: list[int] = field(default_factory=list)
    n_rows: int = 0
    stopped_at_eos: bool = False


def pack_waves(groups: Sequence[PredictionGroup], max_rows: int, anchor: bool) -> list[list[PredictionGroup]]:
    """Pack groups into waves of at most ``max_rows`` rows (first-fit decreasing).

    A group larger than ``max_rows`` gets a wave of its own: its rows must be summed in
    the same step, so they share one cache.
    """
    extra = 1 if anchor else 0
    waves: list[list[PredictionGroup]] = []
    sizes: list[int] = []
    for group in sorted(groups, key=lambda g: len(g.prompt_ids), reverse=True):
        need = len(group.prompt_ids) + extra
        for i, used in enumerate(sizes):
            if used + need <= max_rows:
                waves[i].append(group)
                sizes[i] += need
                break
        else:
            waves.append([group])
            sizes.append(need)
    return waves


def deliver(
    outputs: Sequence[GroupOutput],
    results: dict[int, GroupOutput],
    on_group_done: Callable[[GroupOutput], None] | None,
    progress: StageProgress | None,
) -> None:
    """Record finished groups, hand each to the caller (checkpoint, preview) and advance the bar."""
    for out in outputs:
        results[out.gid] = out
        if on_group_done:
            on_group_done(out)
        if progress:
            progress.advance(1)


class PrivatePredictionEngine:
    """Runs private prediction for many groups, batched, on one language model."""

    def __init__(self, llm: LanguageModel, config: EngineConfig, sampler: TokenSampler) -> None:
        self.llm = llm
        self.config = config
        self.sampler = sampler

    def run(
        self,
        groups: Sequence[PredictionGroup],
        progress: StageProgress | None = None,
        on_group_done: Callable[[GroupOutput], None] | None = None,
    ) -> dict[int, GroupOutput]:
        """Generate one token sequence per group. Progress counts finished groups."""
        results: dict[int, GroupOutput] = {}
        pending = list(pack_waves(groups, self.config.max_rows, self.config.public_anchor))
        while pending:
            wave = pending.pop(0)
            try:
                outputs = self._run_wave(wave, progress)
            except torch.OutOfMemoryError:
                if len(wave) == 1:
                    raise
                torch.cuda.empty_cache()
                half = max(1, self.config.max_rows // 2)
                self.config = EngineConfig(**{**self.config.__dict__, "max_rows": half})
                # Repack every group not yet written, not only the failed wave: waves packed for the
                # old size would each fail once more (and halve the size again) before fitting.
                unfinished = list(wave) + [g for w in pending for g in w]
                pending = list(pack_waves(unfinished, half, self.config.public_anchor))
                continue
            deliver(outputs, results, on_group_done, progress)
        return results

    def _run_wave(self, wave: Sequence[PredictionGroup], progress: StageProgress | None) -> list[GroupOutput]:
        cfg = self.config
        anchor = cfg.public_anchor
        prompts: list[Sequence[int]] = []
        row_group: list[int] = []  # wave-local group index of each row
        public_row_of: list[int] = []  # row index of each group's public row (anchoring)
        for gi, group in enumerate(wave):
            for ids in group.prompt_ids:
                prompts.append(ids)
                row_group.append(gi)
            if anchor:
                public_row_of.append(len(prompts))
                prompts.append(group.public_prompt_ids)
                row_group.append(-1 - gi)  # marks a public row
        # A wave of groups without any row still samples: z = 0 gives uniform tokens, exactly
        # what the mechanism does for an empty S_r (skipping it would reveal |S_r| = 0).
        session = None
        if prompts and cfg.shared_prefix:  # a public template's first tokens, computed once per wave
            session = self.llm.start_logits(prompts, shared_prefix=cfg.shared_prefix)
        elif prompts:
            session = self.llm.start_logits(prompts)
        device = torch.device(self.llm.device)
        groups_of_rows = torch.tensor(row_group, device=device)
        outputs = [GroupOutput(g.gid, n_rows=len(g.prompt_ids)) for g in wave]
        active = list(range(len(wave)))  # wave-local group indices still generating
        eos = self.llm.eos_token_ids

        for _step in range(cfg.max_new_tokens):
            if progress:
                progress.check_cancel()
            z = self._aggregate(session, groups_of_rows, active, anchor)
            if cfg.force_length:  # a fixed public candidate set (all but EOS): the same cost per token
                z = without_eos(z, eos)
            tokens = self.sampler.sample(z, keys=[wave[gi].gid for gi in active])  # softmax(z / tau), whole vocabulary
            token_list = tokens.tolist()
            finished: set[int] = set()
            for pos, gi in enumerate(active):
                tok = int(token_list[pos])
                if tok in eos:
                    outputs[gi].stopped_at_eos = True
                    finished.add(gi)
                else:
                    outputs[gi].token_ids.append(tok)
            if progress:  # the time left counts down token step by token step
                progress.partial(len(wave) * (_step + 1) / cfg.max_new_tokens)
            if _step == cfg.max_new_tokens - 1:
                break
            still = [gi for gi in active if gi not in finished]
            if not still:
                break
            if finished:
                keep_pos = torch.tensor([active.index(gi) for gi in still], device=tokens.device)
                tokens, active = tokens[keep_pos], still
                if session is not None:
                    keep_rows = self._rows_of(groups_of_rows, still)
                    session.keep(keep_rows)
                    groups_of_rows = groups_of_rows[keep_rows]
            if session is not None:
                session.append(self._row_tokens(groups_of_rows, active, tokens))
        return outputs

    @staticmethod
    def _group_index(groups_of_rows: torch.Tensor) -> torch.Tensor:
        """Wave-local group index of each row (public rows map to their group too)."""
        return torch.where(groups_of_rows >= 0, groups_of_rows, -1 - groups_of_rows)

    def _rows_of(self, groups_of_rows: torch.Tensor, keep_groups: list[int]) -> torch.Tensor:
        wanted = torch.tensor(keep_groups, device=groups_of_rows.device)
        mask = torch.isin(self._group_index(groups_of_rows), wanted)
        return torch.nonzero(mask, as_tuple=False).flatten()

    def _row_tokens(self, groups_of_rows: torch.Tensor, active: list[int], tokens: torch.Tensor) -> torch.Tensor:
        """The token each row appends: the token sampled for its group."""
        lookup = torch.full((max(active) + 1,), -1, dtype=torch.long, device=groups_of_rows.device)
        lookup[torch.tensor(active, device=groups_of_rows.device)] = torch.arange(
            len(active), device=groups_of_rows.device
        )
        return tokens.to(groups_of_rows.device)[lookup[self._group_index(groups_of_rows)]]

    def _aggregate(
        self, session: LogitsSession | None, groups_of_rows: torch.Tensor, active: list[int], anchor: bool
    ) -> torch.Tensor:
        """z for each active group: segment-sum of clipped private rows (+ public base)."""
        if session is None:
            return torch.zeros(len(active), self.llm.vocab_size, dtype=torch.float32, device=self.llm.device)
        logits = session.logits().float()
        device = logits.device
        gidx = self._group_index(groups_of_rows)
        # Position of each row's group among the active groups.
        lookup = torch.full((max(active) + 1,), -1, dtype=torch.long, device=device)
        lookup[torch.tensor(active, device=device)] = torch.arange(len(active), device=device)
        slot = lookup[gidx]
        private = groups_of_rows >= 0
        if not anchor:
            z = torch.zeros(len(active), logits.shape[1], dtype=torch.float32, device=device)
            z.index_add_(0, slot, clip_logits(logits, self.config.clip))
            return z
        public_rows = torch.nonzero(~private, as_tuple=False).flatten()
        public_logits = logits[public_rows][torch.argsort(slot[public_rows])]  # one per active group, slot order
        priv_rows = torch.nonzero(private, as_tuple=False).flatten()
        return anchored_aggregate(logits[priv_rows], slot[priv_rows], public_logits, self.config)


def without_eos(z: torch.Tensor, eos: frozenset[int]) -> torch.Tensor:
    """z with every EOS token at -inf: sampling then never stops a group before T tokens.

    The excluded set is public (the tokenizer's EOS ids), so sampling from softmax(z/tau) over the
    rest is an exponential mechanism over a fixed candidate set: the per-token cost is unchanged."""
    ids = torch.tensor(sorted(i for i in eos if i < z.shape[-1]), dtype=torch.long, device=z.device)
    return z.index_fill(-1, ids, float("-inf"))


def anchored_aggregate(
    private_logits: torch.Tensor, private_slot: torch.Tensor, public_logits: torch.Tensor, cfg: EngineConfig
) -> torch.Tensor:
    """z for each group from its private rows (``private_slot`` = their group) and its public row.

    Every private row's contribution lies in [-c, c] coordinate-wise; the public base and the
    Top-k+ mask depend on the public row alone.
    """
    z = torch.zeros_like(public_logits)
    public_logp = torch.log_softmax(public_logits, dim=-1)
    if cfg.clip_mode == "dclip":
        diffs = torch.log_softmax(private_logits, dim=-1) - public_logp[private_slot]
        z.index_add_(0, private_slot, dclip(diffs, cfg.clip))
        z += cfg.public_weight * cfg.tau * public_logp
    else:
        diffs = private_logits - public_logits[private_slot]
        z.index_add_(0, private_slot, clip_logits(diffs, cfg.clip))
        z += cfg.tau * public_logp
    if cfg.top_k_plus:
        z = z.masked_fill(~top_k_plus_candidates(public_logp, cfg.top_k_plus, cfg.top_k_margin), float("-inf"))
    return z


def dclip(diffs: torch.Tensor, c: float) -> torch.Tensor:
    """DClip: clamp every coordinate of a row's log-probability difference to [-c, c] (NaN -> 0)."""
    if not (c > 0.0) or math.isinf(c):
        raise ValueError(f"The clip bound must be a finite number > 0 (got {c}).")
    return torch.clamp(torch.nan_to_num(diffs, nan=0.0, posinf=c, neginf=-c), -c, c)


def top_k_plus_candidates(public_logp: torch.Tensor, k: int, margin: float) -> torch.Tensor:
    """V_k+ per row: the k largest public log-probabilities plus all within ``margin`` of the k-th.

    A boolean mask [groups, vocabulary] computed from the public row only.
    """
    k = max(1, min(int(k), public_logp.shape[-1]))
    kth = torch.topk(public_logp, k, dim=-1).values[:, -1:]
    return public_logp >= kth - float(margin)


def top_k_plus_margin(c: float, public_weight: float, tau: float, rows: int) -> float:
    """The V_k+ margin on log p_pub: how far below the k-th public token a token may start and
    still win if ``rows`` private rows all push it up by c and the k-th down by c.

    In z units two tokens' order can change by at most 2·rows·c; the public base scales log p_pub
    by lambda·tau, so the margin on log p_pub is 2·rows·c / (lambda·tau). ``rows`` must be a
    public number (the cluster-size target k of the run spec), never |S_r|.
    """
    return 2.0 * rows * c / (public_weight * tau)
