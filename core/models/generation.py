"""Public text generation over a ``LogitsSession``: the one sampler and the one decoding loop.

Both backends' ``generate`` (the non-private steps: keyword extraction, self-filter, abstraction,
rewriting) and Aug-PE's public writer decode with these two functions, over the same
``LogitsSession`` the private-prediction engine uses (``LanguageModel.start_logits``): one
left-padded prefill, then one token per row per step; rows that emit EOS leave the batch.

Only public text is generated here (no private document is in any prompt), so ordinary
temperature / top-p sampling is allowed (unlike private prediction, where any data-dependent
truncation breaks the guarantee; that sampler lives in ``core.methods.private_prediction``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import torch

from core.models.base import LogitsSession

NUCLEUS_CANDIDATES = 256  # tokens ranked first; the full vocabulary is sorted only when they hold < top_p


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
    ranked, order = log_p.topk(min(NUCLEUS_CANDIDATES, log_p.shape[-1]), dim=-1)
    if bool((ranked.exp().sum(dim=-1) < top_p).any()):
        ranked, order = log_p.sort(dim=-1, descending=True)
    p = ranked.exp()
    before = p.cumsum(dim=-1) - p  # mass of the tokens ranked above each token
    p = torch.where(before < top_p, p, torch.zeros_like(p))
    choice = torch.multinomial(p, 1, generator=generator)
    return order.gather(-1, choice).squeeze(1)


def decode_rows(
    session: LogitsSession,
    eos_token_ids: Collection[int],
    max_new_tokens: int,
    temperature: float,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
) -> list[list[int]]:
    """The new token ids of every row of ``session``, sampled until EOS or ``max_new_tokens``.

    A row that emits EOS leaves the batch (``session.keep``, its cache is freed); the EOS token is
    not part of its output.
    """
    outputs: list[list[int]] = [[] for _ in range(session.n_rows)]
    active = list(range(session.n_rows))
    for step in range(max_new_tokens):
        tokens = sample_next(session.logits(), temperature, top_p, generator)
        keep = [pos for pos, tok in enumerate(tokens.tolist()) if tok not in eos_token_ids]
        for pos in keep:
            outputs[active[pos]].append(int(tokens[pos]))
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(active):
            index = torch.tensor(keep, dtype=torch.long, device=tokens.device)
            session.keep(index)
            tokens = tokens[index]
            active = [active[pos] for pos in keep]
        session.append(tokens)
    return outputs
