"""The batched private-prediction engine (SPEC §2.4), shared by DP-SynRAG and DP-Synth.

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

Optional public anchoring (InvisibleInk-style): one extra *public* row per group holds the
same prompt without the document; each private row contributes clip(l_u - l_pub) and the
public log-probabilities, which depend on no private data, are added as a base. The
per-token cost stays (c/tau)^2 / 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from core.models.base import LanguageModel, LogitsSession
from core.privacy.mechanisms import TokenSampler, clip_logits
from core.progress import StageProgress


@dataclass(frozen=True)
class PredictionGroup:
    """One group of units that jointly writes one synthetic text.

    ``prompt_ids`` holds one tokenised prompt per member unit; ``public_prompt_ids`` is the
    same prompt without any document (used only with public anchoring).
    """

    gid: int
    prompt_ids: tuple[tuple[int, ...], ...]
    public_prompt_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class EngineConfig:
    max_new_tokens: int  # T
    clip: float  # c
    tau: float  # temperature
    max_rows: int = 256  # rows held in one wave's KV cache
    public_anchor: bool = False


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
                pending[:0] = pack_waves(wave, half, self.config.public_anchor)
                continue
            for out in outputs:
                results[out.gid] = out
                if on_group_done:
                    on_group_done(out)
                if progress:
                    progress.advance(1)
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
        session = self.llm.start_logits(prompts) if prompts else None
        device = torch.device(self.llm.device)
        groups_of_rows = torch.tensor(row_group, device=device)
        outputs = [GroupOutput(g.gid, n_rows=len(g.prompt_ids)) for g in wave]
        active = list(range(len(wave)))  # wave-local group indices still generating
        eos = self.llm.eos_token_ids

        for _step in range(cfg.max_new_tokens):
            if progress:
                progress.check_cancel()
            z = self._aggregate(session, groups_of_rows, active, anchor)
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
        z = torch.zeros(len(active), logits.shape[1], dtype=torch.float32, device=device)
        if anchor:
            public_rows = torch.nonzero(~private, as_tuple=False).flatten()
            public_logits = logits[public_rows]  # one per active group, in slot order
            order = torch.argsort(slot[public_rows])
            public_logits = public_logits[order]
            priv_rows = torch.nonzero(private, as_tuple=False).flatten()
            diffs = logits[priv_rows] - public_logits[slot[priv_rows]]
            z.index_add_(0, slot[priv_rows], clip_logits(diffs, self.config.clip))
            z += self.config.tau * torch.log_softmax(public_logits, dim=-1)
        else:
            z.index_add_(0, slot, clip_logits(logits, self.config.clip))
        return z
