"""Public text generation over a ``LogitsSession``: the one sampler and the one decoding loop.

Both backends' ``generate`` (the non-private steps: keyword extraction, self-filter, abstraction,
rewriting), Aug-PE's public writer and DP-SynRAG's public writer decode with these two functions, over
the same ``LogitsSession`` the private-prediction engine uses (``LanguageModel.start_logits``): one
left-padded prefill, then one token per row per step; rows that emit EOS leave the batch. A
:class:`LogitsProcessor` shapes each step's logits inside the loop (DP-SynRAG's writer's rules:
``core.methods.dp_synrag.write.public_decoding.WriterRules``); by default none does.

Only public text is generated here (no private document is in any prompt), so ordinary
temperature / top-p sampling is allowed (unlike private prediction, where any data-dependent
truncation breaks the guarantee; that sampler lives in ``core.methods.private_prediction``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

import torch

from core.models.base import LogitsSession

# Tokens ranked first, then more when they hold < top_p; the full vocabulary is sorted only when the last holds
# < top_p too. A near-flat distribution (the tiny random model at the writer's temperature) needs many: 16,384 of
# its 49k tokens hold 0.94 of the mass, 4,096 only 0.72; ranking 16,384 takes 24 ms against a full sort's 58 ms
# (16 rows, one thread), and sampling among them a third of the time of sampling among all.
NUCLEUS_CANDIDATES = (256, 16_384)
END_MARGIN = 100.0  # a session past its ``ends_after``: the end of text this far above every other logit


@dataclass(frozen=True)
class Sampling:
    """How the public model samples: length, temperature (0 = greedy), nucleus (top-p), rows per batch."""

    max_new_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    batch_size: int = 32


def sample_next(
    logits: torch.Tensor, temperature: float, top_p: float = 1.0, generator: torch.Generator | None = None
) -> torch.Tensor:
    """One token per row from softmax(logits / temperature), restricted to the top-p nucleus.

    temperature 0 is greedy (argmax). top_p 1 keeps the whole vocabulary (no top-k, no penalties);
    otherwise the nucleus is the smallest set of most likely tokens whose mass reaches top_p.
    Sampled on the generator's device (the logits' device when there is no generator).
    """
    device = generator.device if generator is not None else logits.device
    x = logits.detach().to(device, torch.float32)
    if temperature <= 0:
        return x.argmax(dim=-1)
    log_p = torch.log_softmax(x / temperature, dim=-1)
    if top_p >= 1.0:
        return torch.multinomial(log_p.exp(), 1, generator=generator).squeeze(1)
    ranked, order = nucleus_candidates(log_p, top_p)
    p = ranked.exp()
    before = p.cumsum(dim=-1) - p  # mass of the tokens ranked above each token
    p = torch.where(before < top_p, p, torch.zeros_like(p))
    choice = torch.multinomial(p, 1, generator=generator)
    return order.gather(-1, choice).squeeze(1)


def nucleus_candidates(log_p: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The most likely tokens of each row, most likely first (log-probabilities and ids), enough of them that
    every row's nucleus (the first tokens whose mass reaches ``top_p``) lies among them."""
    width = log_p.shape[-1]
    for k in NUCLEUS_CANDIDATES:
        if k >= width:
            break
        ranked, order = log_p.topk(k, dim=-1)
        if not bool((ranked.exp().sum(dim=-1) < top_p).any()):
            return ranked, order
    return log_p.sort(dim=-1, descending=True)


class LogitsProcessor(Protocol):
    """Rules applied inside :func:`decode_rows` to every step's logits before a token is sampled, for the
    rows still writing (the first ``n`` rows of the batch, in the order :meth:`keep` leaves them)."""

    def __call__(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        """The logits ``[rows, vocab]`` this step's tokens are sampled from (``step``: 0 for the first token)."""
        ...

    def choose(self, sampled: torch.Tensor) -> torch.Tensor:
        """The tokens the rows take: the sampled ones, but where a rule decides the next token itself (a
        sample is still drawn for every row, so the sampler's random stream does not depend on the rules)."""
        ...

    def keep(self, index: torch.Tensor) -> None:
        """Only the rows at these positions go on writing, in this order (the others ended)."""
        ...

    def advance(self, tokens: torch.Tensor) -> None:
        """The tokens the rows still writing have just chosen (one per row)."""
        ...


class NoRules:
    """Sample from the model's logits as they are."""

    def __call__(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        return logits

    def choose(self, sampled: torch.Tensor) -> torch.Tensor:
        return sampled

    def keep(self, index: torch.Tensor) -> None:
        return None

    def advance(self, tokens: torch.Tensor) -> None:
        return None


NO_RULES = NoRules()


def decode_rows(
    session: LogitsSession,
    eos_token_ids: Collection[int],
    max_new_tokens: int,
    temperature: float,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
    rules: LogitsProcessor = NO_RULES,
) -> list[list[int]]:
    """The new token ids of every row of ``session``, sampled until EOS or ``max_new_tokens`` from the logits
    ``rules`` shape.

    A row that emits EOS leaves the batch (``session.keep`` and ``rules.keep``; its cache is freed); the EOS
    token is not part of its output. A session with ``ends_after`` (the tiny random model in test mode,
    ``core.models.tiny.end_quickly``) ends every row that may end once that many tokens are written.
    """
    outputs: list[list[int]] = [[] for _ in range(session.n_rows)]
    active = list(range(session.n_rows))
    ends_after = getattr(session, "ends_after", None)
    for step in range(max_new_tokens):
        shaped = rules(session.logits(), step)
        if ends_after is not None and step >= ends_after:
            shaped = end_now(shaped, eos_token_ids)
        tokens = rules.choose(sample_next(shaped, temperature, top_p, generator))
        chosen = tokens.tolist()
        keep = [pos for pos, tok in enumerate(chosen) if tok not in eos_token_ids]
        for pos in keep:
            outputs[active[pos]].append(int(chosen[pos]))
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(active):
            index = torch.tensor(keep, dtype=torch.long, device=tokens.device)
            session.keep(index)
            rules.keep(index)
            tokens = tokens[index]
            active = [active[pos] for pos in keep]
        rules.advance(tokens)
        session.append(tokens)
    return outputs


def end_now(logits: torch.Tensor, eos_token_ids: Collection[int]) -> torch.Tensor:
    """``logits`` with the end of text ``END_MARGIN`` above every other token in each row where it is not banned
    (-inf: a rule keeps that row writing), so those rows end whatever the temperature or nucleus."""
    eos = torch.tensor(sorted(t for t in eos_token_ids if t < logits.shape[-1]), dtype=torch.long, device=logits.device)
    if not eos.numel():
        return logits
    ended = logits.clone()
    top = logits.max(dim=-1, keepdim=True).values
    ended[:, eos] = torch.where(torch.isneginf(logits[:, eos]), logits[:, eos], top + END_MARGIN)
    return ended
