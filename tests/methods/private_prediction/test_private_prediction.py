"""The batched private-prediction engine against a slow, obviously-correct reference."""

from __future__ import annotations

import torch

from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine, pack_waves
from core.privacy.mechanisms import TokenSampler, clip_logits

V = 23
EOS = 0


def reference_logits(prefix: list[int]) -> torch.Tensor:
    """Logits that depend on the whole prefix (so a wrong cache or row mix-up shows)."""
    g = torch.Generator().manual_seed(hash(tuple(prefix)) % (2**31))  # public fake model weights
    return torch.randn(V, generator=g) * 3


class FakeSession:
    def __init__(self, prompts):
        self.rows = [list(p) for p in prompts]

    @property
    def n_rows(self):
        return len(self.rows)

    def logits(self):
        return torch.stack([reference_logits(r) for r in self.rows])

    def append(self, tokens):
        assert len(tokens) == len(self.rows)
        for row, tok in zip(self.rows, tokens.tolist()):
            row.append(int(tok))

    def keep(self, rows):
        self.rows = [self.rows[i] for i in rows.tolist()]


class FakeLM:
    name = "fake"
    device = "cpu"
    vocab_size = V
    eos_token_ids = frozenset({EOS})

    def __init__(self):
        self.sessions = []

    def start_logits(self, prompt_ids):
        s = FakeSession(prompt_ids)
        self.sessions.append(s)
        return s


class RecordingSampler:
    """Deterministic stand-in for the DP sampler: records z, picks the argmax (EOS forced on cue)."""

    def __init__(self, stop_after: dict[int, int] | None = None):
        self.calls: list[torch.Tensor] = []

    def sample(self, z, keys=None):
        self.calls.append(z.clone())
        return torch.argmax(z[:, 1:], dim=1) + 1  # never EOS


def expected_run(groups, c, T, anchor=False):
    """Reference: per group, step by step, recompute every row's full prefix without a cache."""
    out = {}
    for g in groups:
        generated = []
        for _ in range(T):
            z = torch.zeros(V)
            pub = reference_logits(list(g.public_prompt_ids) + generated) if anchor else None
            for p in g.prompt_ids:
                l = reference_logits(list(p) + generated)
                z += clip_logits((l - pub if anchor else l).unsqueeze(0), c)[0]
            if anchor:
                z += torch.log_softmax(pub, dim=-1)
            tok = int(torch.argmax(z[1:])) + 1
            generated.append(tok)
        out[g.gid] = generated
    return out


def make_groups(sizes, anchor=False):
    groups = []
    for gid, n in enumerate(sizes):
        prompts = tuple(tuple([5 + gid, 7 + i % 3, 11 + i]) for i in range(n))
        groups.append(PredictionGroup(gid, prompts, (3, 4) if anchor else ()))
    return groups


def test_engine_matches_uncached_reference_across_waves():
    groups = make_groups([3, 1, 4, 2, 5])
    lm = FakeLM()
    engine = PrivatePredictionEngine(lm, EngineConfig(max_new_tokens=6, clip=0.7, tau=1.0, max_rows=6), RecordingSampler())
    results = engine.run(groups)
    expected = expected_run(groups, 0.7, 6)
    assert {gid: r.token_ids for gid, r in results.items()} == expected
    assert len(lm.sessions) > 1  # several waves were used


def test_engine_with_public_anchor_matches_reference():
    groups = make_groups([2, 3], anchor=True)
    engine = PrivatePredictionEngine(
        FakeLM(), EngineConfig(max_new_tokens=4, clip=0.5, tau=1.0, max_rows=64, public_anchor=True), RecordingSampler()
    )
    results = engine.run(groups)
    assert {gid: r.token_ids for gid, r in results.items()} == expected_run(groups, 0.5, 4, anchor=True)


class EosSampler:
    """Emits EOS for group slot 0 at step 2, otherwise token 1; records batch widths."""

    def __init__(self):
        self.step = 0
        self.widths = []

    def sample(self, z, keys=None):
        self.widths.append(z.shape[0])
        tokens = torch.ones(z.shape[0], dtype=torch.long)
        if self.step == 2:
            tokens[0] = EOS
        self.step += 1
        return tokens


def test_groups_leave_the_batch_at_eos_and_rows_are_dropped():
    groups = make_groups([2, 2, 2])
    lm = FakeLM()
    sampler = EosSampler()
    results = PrivatePredictionEngine(lm, EngineConfig(5, 1.0, 1.0, max_rows=64), sampler).run(groups)
    stopped = [r for r in results.values() if r.stopped_at_eos]
    assert len(stopped) == 1 and stopped[0].token_ids == [1, 1]
    assert sampler.widths == [3, 3, 3, 2, 2]
    assert lm.sessions[0].n_rows == 4  # the stopped group's two rows left the cache


def test_each_group_contribution_is_bounded_by_c_per_row():
    groups = make_groups([4])
    sampler = RecordingSampler()
    PrivatePredictionEngine(FakeLM(), EngineConfig(3, 0.25, 1.0), sampler).run(groups)
    for z in sampler.calls:
        assert float(z.abs().max()) <= 4 * 0.25 + 1e-6


def test_pack_waves_respects_row_budget_and_keeps_every_group():
    groups = make_groups([5, 1, 7, 3, 2, 2])
    waves = pack_waves(groups, max_rows=7, anchor=False)
    assert sorted(g.gid for w in waves for g in w) == list(range(6))
    assert all(sum(len(g.prompt_ids) for g in w) <= 7 for w in waves)
    big = pack_waves(make_groups([10]), max_rows=4, anchor=False)
    assert len(big) == 1  # an oversized group gets a wave of its own


class CountingSampler(RecordingSampler):
    def sample(self, z, keys=None):
        self.calls.append(z.clone())
        return torch.full((z.shape[0],), 1, dtype=torch.long)


def test_groups_without_rows_still_sample_from_the_mechanism():
    """An empty S_r gets z = 0 (uniform), never an empty text: skipping it would reveal |S_r| = 0."""
    groups = [PredictionGroup(0, ()), PredictionGroup(1, ((5, 6),)), PredictionGroup(2, ())]
    sampler = CountingSampler()
    lm = FakeLM()
    results = PrivatePredictionEngine(lm, EngineConfig(3, 1.0, 1.0, max_rows=1), sampler).run(groups)
    assert all(len(r.token_ids) == 3 for r in results.values())
    only_empty = PrivatePredictionEngine(FakeLM(), EngineConfig(2, 1.0, 1.0), CountingSampler()).run(groups[:1])
    assert only_empty[0].token_ids == [1, 1]


def test_sharing_the_public_template_prefix_changes_no_token():
    from core.methods.private_prediction.prompts import template_prefix_length
    from core.models.registry import load_language_model
    from core.privacy.randomness import test_mode_torch_generator
    from core.common.prompts import render
    from core.specs.runspec import ModelChoice

    llm = load_language_model(ModelChoice(source="tiny-random"))
    prefix = template_prefix_length(llm)
    documents = [f"Note {i}: {['fever', 'cough', 'a rash'][i % 3]} since day {i}." for i in range(6)]
    prompts = llm.chat_prompt_ids([render("rephrase", document=d) for d in documents], 64)
    groups = [PredictionGroup(g, tuple(tuple(p) for p in prompts[2 * g : 2 * g + 2])) for g in range(3)]

    def tokens(shared: int) -> dict[int, list[int]]:
        config = EngineConfig(max_new_tokens=6, clip=1.0, tau=1.0, max_rows=6, shared_prefix=shared)
        sampler = TokenSampler(1.0, test_mode_torch_generator(7))  # NON-PRIVATE test mode: same draws
        return {g: out.token_ids for g, out in PrivatePredictionEngine(llm, config, sampler).run(groups).items()}

    assert prefix > 0
    assert tokens(prefix) == tokens(0)
