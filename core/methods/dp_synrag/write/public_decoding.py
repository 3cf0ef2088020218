"""Public decoding for the public writer (docs/method.md §2.4b): temperature / top-p sampling (greedy on
request), a repetition penalty, no repeated n-grams, a copy guard against a demonstration, and released
words pulled in by lexically constrained decoding. Every rule is applied to the whole batch's logits on
the model's device (``logit_shaping.py``) by one logits processor (:class:`WriterRules`) inside the
generation module's decoding loop (``core.models.generation.decode_rows``, the one public decoding loop),
and the prompts' common first tokens are computed once.

It reads public prompts and public logits only: post-processing of released words, no privacy cost. The
sampling is not a privacy mechanism; its randomness comes from OS entropy (a seeded generator only in
the explicit test mode, :func:`writer_generator`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, TypedDict, Unpack

import torch

from core.methods.dp_synrag.vocab.vocabulary import load_stop_words
from core.methods.dp_synrag.write.logit_shaping import (
    GuardTable,
    Rows,
    Shaped,
    Shaping,
    TokenEdges,
    advance,
    shape,
    start_rows,
    word_forms,
)
from core.methods.dp_synrag.write.echo import Echo
from core.models.base import LanguageModel
from core.models.generation import decode_rows
from core.privacy.randomness import secure_torch_generator, test_mode_torch_generator

# Public constants of the writer's decoding. Measured with bench/writer_decoding.py (docs/benchmarks.md): against
# temperature 0.8, top-p 0.95 and a penalty of 1.3, these cut the share of content words no real note holds (what
# the writer invents) from 0.53 to 0.43 over three paired draws, retrieval unchanged, distinct-2 0.81 -> 0.74.
REPETITION_PENALTY = 1.15  # public decoding (CTRL-style): divides a positive logit, multiplies a negative one
NO_REPEAT_NGRAM = 3  # a token that would repeat a 3-gram already written is never chosen
COPY_NGRAM = 4  # the writer never writes a 4-token run of the demonstration that the bare form does not hold
WRITER_TEMPERATURE = 0.5  # the writer's sampling: variety without wandering off the released words
WRITER_TOP_P = 0.9
# The echo (logit_shaping.py): a token that would repeat a 3-gram the stage's other documents wrote c times loses
# ECHO_PENALTY · ln(1 + c) of its logit. Measured with bench/writer_decoding.py (docs/benchmarks.md): on one
# released draw each, against no echo, 2.0 raised distinct-2 0.60 -> 0.68 (news) and 0.36 -> 0.42 (clinic) and the
# news's held-out content words 0.79 -> 0.84, with role accuracy and retrieval unchanged; 1.0 did about half. Sparing the
# joints (joint_tokens) kept most of that (news 0.58 -> 0.63, clinic 0.35 -> 0.39) and the film lists lists.
ECHO_PENALTY = 2.0
ECHO_NGRAM = 3


def stage_echo(tokenizer, form: str, penalty: float = ECHO_PENALTY) -> Echo:
    """The echo of one writing stage: nothing remembered yet; the form's own tokens and the joints of any text
    (:func:`joint_tokens`) are never discouraged."""
    if penalty <= 0:  # off: nothing is discouraged, so nothing needs sparing (no pass over the vocabulary)
        return Echo(penalty, ECHO_NGRAM)
    own = tokenizer.encode(form, add_special_tokens=False) if form else []
    return Echo(penalty, ECHO_NGRAM, [*own, *joint_tokens(tokenizer)])


def joint_tokens(tokenizer) -> list[int]:
    """The tokens that join words rather than say something: punctuation, spaces and stop words ("," "and" "the").
    The echo spares them, so a list may go on as lists do ("…, Forrest Gump and …") and only the writer's
    repeated wording is discouraged (round 4, session 13: on film lists the echo without this turned lists into
    commentary)."""
    stop = load_stop_words()
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
    return [i for i, text in enumerate(texts)
            if not any(c.isalnum() for c in text) or text.strip().lower() in stop]


@dataclass(frozen=True)
class Decoding:
    """How the writer chooses each token from its shaped logits: temperature 0 is greedy (argmax);
    otherwise a sample from softmax(logits / temperature) restricted to the top-p nucleus."""

    temperature: float
    top_p: float = 1.0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


GREEDY = Decoding(0.0)
SAMPLED = Decoding(WRITER_TEMPERATURE, WRITER_TOP_P)  # the writer's default


def writer_generator(device: str, test_seed: int | None = None) -> torch.Generator:
    """The generator of the writer's sampling: keyed from OS entropy, or seeded in the explicit,
    non-private test mode (``MethodContext.test_seed``) so that a test-mode run writes the same again."""
    if test_seed is not None:
        return test_mode_torch_generator(test_seed, device)
    return secure_torch_generator(device)


def missing_words(text: str, words: Sequence[str]) -> list[str]:
    """The released words that do not appear verbatim (case-insensitive, on word boundaries) in ``text``."""
    lowered = text.lower()
    return [w for w in words if not re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", lowered)]



def _banned_by_ngrams(tokens: Sequence[int], n: int) -> set[int]:
    """Tokens that would repeat an n-gram already in ``tokens``."""
    if n < 2 or len(tokens) < n - 1:
        return set()
    prefix = tuple(tokens[len(tokens) - n + 1 :])
    return {tokens[i + n - 1] for i in range(len(tokens) - n + 1) if tuple(tokens[i : i + n - 1]) == prefix}


CopyGuard = dict[tuple[int, ...], set[int]]


def _word_ids(tokenizer, word: str) -> list[list[int]]:
    """The token ids of ``word`` as written after a space: as given, capitalised and in title case."""
    forms = dict.fromkeys((word, word[:1].upper() + word[1:], " ".join(w[:1].upper() + w[1:] for w in word.split())))
    return [ids for ids in (list(tokenizer.encode(" " + f, add_special_tokens=False)) for f in forms) if ids]


def copy_guard(tokenizer, demo_document: str, example: str, avoid: Sequence[str] = (), n: int = COPY_NGRAM) -> CopyGuard:
    """The next tokens that would copy the demonstration, keyed by the tokens before them: an n-token run
    the bare form does not hold, or one of its own words (``avoid``: its topic, names, details). The
    writer keeps the form's words but invents its own."""
    def grams(text: str) -> set[tuple[int, ...]]:
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        return {tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)}

    guard: CopyGuard = {}
    for gram in grams(demo_document) - grams(example):
        guard.setdefault(gram[:-1], set()).add(gram[-1])
    for word in avoid:
        for ids in _word_ids(tokenizer, word):
            key = tuple(ids[:1]) if len(ids) > 1 else ()  # a one-token word is never written; else not finished
            guard.setdefault(key, set()).add(ids[1] if len(ids) > 1 else ids[0])
    return guard


SCAFFOLD = ("Topic", "topic", "Related", "Document", "document", "Key terms")  # the prompt's labels, never a document's


def with_scaffold(tokenizer, guard: CopyGuard, labels: Sequence[str] = SCAFFOLD) -> CopyGuard:
    """``guard`` that also keeps the writer from the prompt's own labels, as written at the start or after a
    space ("The topic of …", "Related words: …"); lower-case "related" stays a word it may write."""
    out = {key: set(tokens) for key, tokens in guard.items()}
    for label in labels:
        for text in (label, " " + label):
            ids = list(tokenizer.encode(text, add_special_tokens=False))
            if 0 < len(ids) <= COPY_NGRAM:
                out.setdefault(tuple(ids[:-1]), set()).add(ids[-1])
    return out


def _banned_by_guard(tokens: Sequence[int], guard: CopyGuard, n: int = COPY_NGRAM) -> set[int]:
    """The guard's bans after ``tokens`` (keys of every length up to n-1 are looked up)."""
    banned: set[int] = set()
    for k in range(min(n - 1, len(tokens)) + 1):
        banned |= guard.get(tuple(tokens[len(tokens) - k :]) if k else (), set())
    return banned


@dataclass(frozen=True)
class WordPull:
    """Lexically constrained decoding for one row: the released words not yet written pull the writer
    (their first tokens gain a bias growing over the answer), a word once begun is finished, and the
    answer does not end while one is missing. ``variants``: each word's token ids as written after a space
    (as given, capitalised, title case), in order; the first that a chosen token begins is finished."""

    words: Sequence[str]
    variants: list[tuple[str, list[int]]]

    @classmethod
    def of(cls, tokenizer, words: Sequence[str]) -> "WordPull":
        return cls(words, [(w, ids) for w in words for ids in _word_ids(tokenizer, w)])


PULL_START, PULL_END = 1.0, 6.0  # the released words' bias at the first and the last token of an answer


def common_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """How many first tokens every prompt shares (at least one token of each is left after them); the
    prompts are public, so their common template and demonstration can be computed once for all rows."""
    if len(prompts) < 2:
        return 0
    shortest = min(len(p) for p in prompts)
    shared = 0
    for column in zip(*prompts):
        if shared >= shortest - 1 or any(t != column[0] for t in column):
            break
        shared += 1
    return shared


class DecodeOptions(TypedDict, total=False):
    """The public decoding's options, each with its default: ``repetition_penalty`` (:data:`REPETITION_PENALTY`),
    ``no_repeat_ngram`` (:data:`NO_REPEAT_NGRAM`), ``max_prompt_tokens`` (None: the model's own bound); ``guard``: what
    of a demonstration the writer must not copy (:func:`copy_guard`); ``pulls``: each row's released words, written
    by constrained decoding (:class:`WordPull`). ``decoding``: :data:`SAMPLED` (the writer's default) or
    :data:`GREEDY`; ``generator``: the sampler's (None: keyed from OS entropy). ``shared_prefix``: the prompts' first
    tokens computed once for all rows (None: their common prefix). ``echo``: what the stage's documents already
    wrote (:func:`stage_echo`), discouraged and then added to."""

    repetition_penalty: float
    no_repeat_ngram: int
    max_prompt_tokens: int | None
    guard: CopyGuard | None
    pulls: Sequence[WordPull] | None
    decoding: Decoding
    generator: torch.Generator | None
    shared_prefix: int | None
    echo: Echo | None


def public_decode(
    llm: LanguageModel,
    messages: Sequence[str],
    answer_starts: Sequence[str],
    max_new_tokens: int,
    **options: Unpack[DecodeOptions],
) -> list[str]:
    """Public decoding over public prompts only, with a repetition penalty and no repeated n-grams
    (:class:`DecodeOptions`). Each row's answer begins with its public ``answer_starts`` text, returned as part of
    the answer."""
    return [llm.decode(ids) for ids in public_decode_tokens(llm, messages, answer_starts, max_new_tokens, **options)]


def public_decode_tokens(
    llm: LanguageModel,
    messages: Sequence[str],
    answer_starts: Sequence[str],
    max_new_tokens: int,
    **options: Unpack[DecodeOptions],
) -> list[list[int]]:
    """Each row's written tokens (its answer start first): :func:`public_decode` before decoding to text."""
    max_prompt_tokens, guard, pulls = options.get("max_prompt_tokens"), options.get("guard"), options.get("pulls")
    decoding, generator = options.get("decoding", SAMPLED), options.get("generator")
    shared_prefix, echo = options.get("shared_prefix"), options.get("echo")
    repetition_penalty = options.get("repetition_penalty", REPETITION_PENALTY)
    no_repeat_ngram = options.get("no_repeat_ngram", NO_REPEAT_NGRAM)
    if not messages:
        return []
    tokenizer = llm.chat.tokenizer
    starts = [list(tokenizer.encode(s, add_special_tokens=False)) if s else [] for s in answer_starts]
    prompts = [p + s for p, s in zip(llm.chat_prompt_ids(messages, max_prompt_tokens), starts)]
    prefix = common_prefix(prompts) if shared_prefix is None else shared_prefix
    session = llm.start_logits(prompts, shared_prefix=prefix) if prefix else llm.start_logits(prompts)
    first = session.logits()
    device, vocab = first.device, first.shape[1]
    if generator is None and not decoding.greedy:
        generator = secure_torch_generator(device)
    rows_of = [(p.words, p.variants) for p in pulls] if pulls else [((), ())] * len(messages)
    forms = word_forms(tokenizer, rows_of, device)
    rows = start_rows(starts, [llm.decode(s) for s in starts], [w for w, _ in rows_of], forms,
                      max((len(s) for s in starts), default=0) + max_new_tokens, device)
    edges = TokenEdges(tokenizer, vocab, device)
    edges.learn(rows.written[rows.written >= 0])
    shaping = Shaping(repetition_penalty, no_repeat_ngram, GuardTable.of(guard or {}, COPY_NGRAM - 1, device),
                      torch.tensor(sorted(t for t in llm.eos_token_ids if t < vocab), dtype=torch.long, device=device),
                      PULL_START, PULL_END, max_new_tokens, echo)
    rules = WriterRules(rows, shaping, edges, max((len(s) for s in starts), default=0))
    written = decode_rows(session, llm.eos_token_ids, max_new_tokens, decoding.temperature, decoding.top_p, generator,
                          rules)
    out = [list(start) + ids for start, ids in zip(starts, written)]
    if echo is not None:
        echo.add(out)
    return out


class WriterRules:
    """The writer's rules as a logits processor of the one decoding loop (``core.models.generation.decode_rows``):
    the repetition penalty, no repeated n-grams, the copy guard and the released words' pull, in one pass over
    the batch's logits on the model's device (``logit_shaping.shape``), and a released word once begun finished
    (a row finishing it takes its next token, whatever it sampled)."""

    def __init__(self, rows: Rows, shaping: Shaping, edges: TokenEdges, longest: int) -> None:
        self.rows, self.shaping, self.edges = rows, shaping, edges
        self.longest = longest  # the longest answer start: the most tokens a row has written before step 0
        self._shaped: Shaped | None = None  # this step's, for ``choose``, ``keep`` and ``advance``

    def __call__(self, logits: torch.Tensor, step: int) -> torch.Tensor:
        self._shaped = shape(logits.float(), self.rows, self.shaping, step, self.longest + step)
        return self._shaped.logits

    def choose(self, sampled: torch.Tensor) -> torch.Tensor:
        shaped = self._step()
        return torch.where(shaped.forced, shaped.forced_token, sampled.to(self.rows.length.device))

    def keep(self, index: torch.Tensor) -> None:
        index = index.to(self.rows.length.device)
        self.rows.keep(index)
        shaped = self._step()
        self._shaped = Shaped(shaped.logits, shaped.forced, shaped.forced_token, shaped.pull_missing.index_select(0, index))

    def advance(self, tokens: torch.Tensor) -> None:
        advance(self.rows, tokens.to(self.rows.length.device), self._step().pull_missing, self.edges)

    def _step(self) -> Shaped:
        if self._shaped is None:
            raise RuntimeError("WriterRules: a step's tokens before its logits were shaped")
        return self._shaped


public_greedy = public_decode  # the old name, kept for callers: it samples unless ``decoding=GREEDY``
