"""The public writer's logits, shaped for the whole batch at once on the model's device (docs/method.md §2.4b).

Every rule of public decoding (``public_decoding.py``) is a tensor operation over all rows, with no
per-row Python loop per decoding step:

* **repetition penalty** — the tokens each row has written, read and rewritten in place;
* **no repeated n-grams** — each row's last n-1 tokens compared with every window of what it wrote;
* **echo** — what followed each row's last n-1 tokens in the stage's other documents (earlier batches:
  binary search in their counted n-grams, ``EchoIndex``; the batch's rows: compared directly): a token
  that would repeat an n-gram written c times elsewhere loses ``penalty · ln(1 + c)`` of its logit, so
  that documents do not all say the same thing the same way;
* **copy guard** — the guard's keys, grouped by length, compared with each row's last tokens;
* **word pulls** — each row's released words as token sequences: the first tokens of the missing ones
  gain the pull's bias, a word once begun is forced to its end, and the row may not end while one is
  missing. Whether a word is written is read from the tokens: one of its forms (as given, lower case,
  capitalised, title case, upper case; after a space or at a word boundary) ends the row, or did and was
  followed by a token that does not continue the word. The answer's public start is read as text.

Only public prompts, public logits and released words are read: post-processing, no privacy cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Mapping, Sequence

import torch

from core.methods.dp_synrag.write.echo import PAD, Echo, echo_counts, last_tokens

NEG_INF = float("-inf")
_NO_MATCH = -3  # a place of a right-aligned form that every token matches (the form is shorter)
_WORD_CHAR = re.compile(r"\w")


class TokenEdges:
    """Whether each token's text starts and ends with a word character (``\\w``), learned for the tokens
    met: a released word counts as written only between word boundaries, as :func:`missing_words` reads
    text. A token's text is decoded after an anchor token, so a leading space is kept."""

    def __init__(self, tokenizer, vocab: int, device: str | torch.device) -> None:
        self._tokenizer = tokenizer
        self._anchor = list(tokenizer.encode("a", add_special_tokens=False))[:1]
        self._anchor_text = tokenizer.decode(self._anchor, skip_special_tokens=True)
        self.known = torch.zeros(vocab, dtype=torch.bool, device=device)
        self.starts_word = torch.zeros(vocab, dtype=torch.bool, device=device)
        self.ends_word = torch.zeros(vocab, dtype=torch.bool, device=device)

    def learn(self, tokens: torch.Tensor) -> None:
        """Decode the tokens among ``tokens`` not met before (one batched decode of the distinct ones)."""
        tokens = tokens.reshape(-1)
        fresh = tokens[~self.known[tokens]]
        if not fresh.numel():
            return
        ids = fresh.unique().tolist()
        named = [i for i in ids if i < len(self._tokenizer)]  # a logits row beyond the tokenizer has no text
        decoded = self._tokenizer.batch_decode([self._anchor + [i] for i in named], skip_special_tokens=True)
        text_of = dict(zip(named, (self._text(t) for t in decoded)))
        texts = [text_of.get(i, "") for i in ids]
        index = torch.tensor(ids, dtype=torch.long, device=self.known.device)
        self.known[index] = True
        self.starts_word[index] = torch.tensor([bool(_WORD_CHAR.match(t[:1])) for t in texts], device=index.device)
        self.ends_word[index] = torch.tensor([bool(_WORD_CHAR.match(t[-1:])) for t in texts], device=index.device)

    def _text(self, decoded: str) -> str:
        return decoded[len(self._anchor_text):] if decoded.startswith(self._anchor_text) else decoded


@dataclass(frozen=True)
class GuardTable:
    """A copy guard (``{tokens before: tokens banned next}``) as tensors, one entry per key length k:
    the keys ``[G_k, k]`` and, for each banned token, the index of its key."""

    keys: tuple[torch.Tensor, ...]
    pair_key: tuple[torch.Tensor, ...]
    pair_token: tuple[torch.Tensor, ...]

    @classmethod
    def of(cls, guard: Mapping[tuple[int, ...], set[int]], longest_key: int, device: str | torch.device) -> "GuardTable":
        """Keys longer than ``longest_key`` are never looked up (as :func:`_banned_by_guard` reads a guard)."""
        keys, pair_key, pair_token = [], [], []
        for k in range(longest_key + 1):
            of_length = sorted(key for key in guard if len(key) == k and guard[key])
            pairs = [(g, t) for g, key in enumerate(of_length) for t in sorted(guard[key])]
            keys.append(torch.tensor(of_length, dtype=torch.long, device=device).reshape(len(of_length), k))
            pair_key.append(torch.tensor([g for g, _ in pairs], dtype=torch.long, device=device))
            pair_token.append(torch.tensor([t for _, t in pairs], dtype=torch.long, device=device))
        return cls(tuple(keys), tuple(pair_key), tuple(pair_token))


def ngram_bans(written: torch.Tensor, length: torch.Tensor, n: int, nothing: int) -> torch.Tensor | None:
    """For each row, the tokens that would repeat an n-gram it wrote (``nothing`` elsewhere), ``[rows, *]``."""
    k = n - 1
    width = written.shape[1]
    if n < 2 or width <= k:
        return None
    windows = written.unfold(1, k, 1)[:, : width - k]  # window i: tokens i .. i+k-1, followed by token i+k
    suffix = last_tokens(written, length, k)
    place = torch.arange(width - k, device=written.device)
    hit = (windows == suffix[:, None, :]).all(-1) & (place[None, :] < (length - k)[:, None])
    return torch.where(hit, written[:, k:], torch.full_like(written[:, k:], nothing))


def guard_bans(table: GuardTable, written: torch.Tensor, length: torch.Tensor, nothing: int) -> list[torch.Tensor]:
    """For each row, the tokens the copy guard bans after its last tokens (``nothing`` elsewhere)."""
    rows = written.shape[0]
    out = []
    for k, (keys, pair_key, pair_token) in enumerate(zip(table.keys, table.pair_key, table.pair_token)):
        if not pair_token.numel():
            continue
        if k == 0:
            out.append(pair_token[None, :].expand(rows, -1))
            continue
        suffix = last_tokens(written, length, k)
        match = (suffix[:, None, :] == keys[None, :, :]).all(-1) & (length >= k)[:, None]
        out.append(torch.where(match[:, pair_key], pair_token[None, :], torch.full_like(pair_token, nothing)[None, :]))
    return out


@dataclass(frozen=True)
class WordForms:
    """Each row's released words as token tables (built once per batch, on the device).

    ``pull_*``: the forms the pull writes (left-aligned ids ``[rows, M, Lp]``, lengths, word index);
    ``form_*``: the forms a word is recognised in (right-aligned ids ``[rows, S, Ls]``, lengths, word index,
    whether the form starts with a space, so that no word boundary needs checking before it).
    Word indices run over each row's distinct words; ``n_words`` (the widest row's count) is a dummy index."""

    pull_ids: torch.Tensor
    pull_len: torch.Tensor
    pull_word: torch.Tensor
    form_ids: torch.Tensor
    form_len: torch.Tensor
    form_word: torch.Tensor
    form_spaced: torch.Tensor
    n_words: int

    @property
    def pull_first(self) -> torch.Tensor:
        return self.pull_ids[:, :, 0]


def _padded(rows: Sequence[Sequence[Sequence[int]]], fill: int, right: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` of token sequences as ``[rows, M, L]`` (``fill`` where empty; right-aligned if ``right``)
    and their lengths ``[rows, M]`` (0 = no sequence)."""
    m = max((len(r) for r in rows), default=0) or 1
    width = max((len(s) for r in rows for s in r), default=0) or 1
    ids = torch.full((len(rows), m, width), fill, dtype=torch.long)
    lengths = torch.zeros((len(rows), m), dtype=torch.long)
    for i, row in enumerate(rows):
        for j, seq in enumerate(row):
            if seq:
                start = width - len(seq) if right else 0
                ids[i, j, start:start + len(seq)] = torch.tensor(list(seq), dtype=torch.long)
                lengths[i, j] = len(seq)
    return ids, lengths


def word_forms(tokenizer, rows: Sequence[tuple[Sequence[str], Sequence[tuple[str, Sequence[int]]]]],
               device: str | torch.device) -> WordForms:
    """The token tables of each row's ``(words, pull variants)`` (:class:`WordPull`'s fields)."""
    pull_seqs, pull_words, form_seqs, form_words, form_spaced = [], [], [], [], []
    n_words = 0
    for words, variants in rows:
        index = {w: i for i, w in enumerate(dict.fromkeys(words))}
        n_words = max(n_words, len(index))
        pull_seqs.append([list(ids) for w, ids in variants if w in index and ids])
        pull_words.append([index[w] for w, ids in variants if w in index and ids])
        seqs, owners, spaced = [], [], []
        for word, i in index.items():
            cased = (word, word.lower(), word.upper(), word[:1].upper() + word[1:],
                     " ".join(w[:1].upper() + w[1:] for w in word.split()))
            found: dict[tuple[int, ...], bool] = {}
            for form in dict.fromkeys(cased):
                for lead in (" ", ""):
                    ids = tuple(tokenizer.encode(lead + form, add_special_tokens=False))
                    if ids:
                        found[ids] = found.get(ids, False) or bool(lead)
            for ids, after_space in found.items():
                seqs.append(list(ids))
                owners.append(i)
                spaced.append(after_space)
        form_seqs.append(seqs)
        form_words.append(owners)
        form_spaced.append(spaced)
    pull_ids, pull_len = _padded(pull_seqs, PAD, right=False)
    form_ids, form_len = _padded(form_seqs, _NO_MATCH, right=True)

    def owner_table(owners: list[list[int]], width: int) -> torch.Tensor:
        table = torch.full((len(owners), width), n_words, dtype=torch.long)
        for r, row in enumerate(owners):
            table[r, : len(row)] = torch.tensor(row, dtype=torch.long)
        return table

    spaced_table = torch.zeros(form_len.shape, dtype=torch.bool)
    for r, row in enumerate(form_spaced):
        spaced_table[r, : len(row)] = torch.tensor(row, dtype=torch.bool)
    return WordForms(pull_ids.to(device), pull_len.to(device), owner_table(pull_words, pull_len.shape[1]).to(device),
                     form_ids.to(device), form_len.to(device), owner_table(form_words, form_len.shape[1]).to(device),
                     spaced_table.to(device), n_words)


def written_at_start(start: str, words: Sequence[str], n_words: int) -> tuple[list[bool], list[bool]]:
    """Which of a row's distinct ``words`` its public start text already holds: ``held`` (followed by a
    non-word character) and ``pending`` (only at the very end, so the next token may still continue it)."""
    text = start.lower()
    held, pending = [False] * n_words, [False] * n_words
    for i, word in enumerate(dict.fromkeys(words)):
        pattern = rf"(?<!\w){re.escape(word.lower())}"
        held[i] = re.search(pattern + r"(?=\W)", text) is not None
        pending[i] = not held[i] and re.search(pattern + r"$", text) is not None
    return held, pending


@dataclass
class Rows:
    """The decoding state of the rows still writing (every tensor has one row per active row)."""

    written: torch.Tensor  # [rows, capacity] tokens written (the answer start first), PAD after them
    length: torch.Tensor  # [rows] how many
    held: torch.Tensor  # [rows, n_words + 1] released words written and closed by a word boundary
    pending: torch.Tensor  # [rows, n_words + 1] released words that end the row's text
    valid: torch.Tensor  # [rows, n_words + 1] the row's own words (the last column is a dummy)
    queue: torch.Tensor  # [rows, Lp] the pull form being finished
    queue_at: torch.Tensor  # [rows] the next place of ``queue`` to write
    queue_len: torch.Tensor  # [rows] its length (queue_at == queue_len: nothing is being finished)
    pull_ids: torch.Tensor
    pull_len: torch.Tensor
    pull_word: torch.Tensor
    form_ids: torch.Tensor
    form_len: torch.Tensor
    form_word: torch.Tensor
    form_spaced: torch.Tensor

    def keep(self, index: torch.Tensor) -> None:
        """Keep only these rows, in this order."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name).index_select(0, index))

    @property
    def missing(self) -> torch.Tensor:
        """[rows, n_words + 1] the row's released words not written yet."""
        return self.valid & ~(self.held | self.pending)

    @property
    def forced(self) -> torch.Tensor:
        """[rows] whether the row is finishing a released word."""
        return self.queue_at < self.queue_len


def start_rows(starts: Sequence[Sequence[int]], start_texts: Sequence[str], words: Sequence[Sequence[str]],
               forms: WordForms, capacity: int, device: str | torch.device) -> Rows:
    """The state before the first step: the answer starts written, the words they already hold."""
    n = len(starts)
    written = torch.full((n, capacity), PAD, dtype=torch.long)
    for i, ids in enumerate(starts):
        written[i, : len(ids)] = torch.tensor(list(ids), dtype=torch.long)
    written = written.to(device)
    length = torch.tensor([len(s) for s in starts], dtype=torch.long, device=device)
    width = forms.n_words + 1
    held = torch.zeros((n, width), dtype=torch.bool)
    pending = torch.zeros((n, width), dtype=torch.bool)
    valid = torch.zeros((n, width), dtype=torch.bool)
    for i, (text, row_words) in enumerate(zip(start_texts, words)):
        h, p = written_at_start(text, row_words, forms.n_words)
        held[i, : forms.n_words] = torch.tensor(h, dtype=torch.bool)
        pending[i, : forms.n_words] = torch.tensor(p, dtype=torch.bool)
        valid[i, : len(dict.fromkeys(row_words))] = True
    queue_width = forms.pull_ids.shape[2]
    zeros = torch.zeros(n, dtype=torch.long, device=device)
    return Rows(written, length, held.to(device), pending.to(device), valid.to(device),
                torch.full((n, queue_width), PAD, dtype=torch.long, device=device), zeros, zeros.clone(),
                forms.pull_ids, forms.pull_len, forms.pull_word, forms.form_ids, forms.form_len, forms.form_word,
                forms.form_spaced)


@dataclass(frozen=True)
class Shaping:
    """The public rules every row's logits get before its token is chosen."""

    repetition_penalty: float
    no_repeat_ngram: int
    guard: GuardTable
    eos: torch.Tensor  # the end-of-text tokens inside the logits' width
    pull_start: float
    pull_end: float
    max_new_tokens: int
    echo: Echo | None = None


@dataclass(frozen=True)
class Shaped:
    """One step's shaped logits ``[rows, vocab]``; the rows finishing a released word (``forced``) take
    ``forced_token`` whatever their logits say; per pull form, whether its word was missing (:func:`advance`)."""

    logits: torch.Tensor
    forced: torch.Tensor
    forced_token: torch.Tensor
    pull_missing: torch.Tensor


def shape(logits: torch.Tensor, rows: Rows, rules: Shaping, step: int, longest: int) -> Shaped:
    """The shaped logits of every row (a new tensor). ``longest``: the most tokens any row has written.

    Only one pass over the ``[rows, vocab]`` logits (their copy with a spare column, where what marks
    nothing points); every rule reads and writes a few places per row (gather / scatter), but the echo,
    when on, which subtracts its counts' penalty from the whole row."""
    n_rows, vocab = logits.shape
    work = torch.empty((n_rows, vocab + 1), dtype=torch.float32, device=logits.device)
    work[:, :vocab] = logits
    written = rows.written[:, : max(1, longest)]
    seen = torch.where(written >= 0, written, vocab)  # the repetition penalty: every token written, once each
    values = work.gather(1, seen)
    work.scatter_(1, seen, torch.where(values > 0, values / rules.repetition_penalty, values * rules.repetition_penalty))
    missing = rows.missing
    pull_missing = missing.gather(1, rows.pull_word) & (rows.pull_len > 0)
    wanted = torch.where(pull_missing, rows.pull_ids[:, :, 0], vocab)  # the missing words' first tokens
    if rules.echo is not None and rules.echo.penalty > 0:
        counts = echo_counts(rules.echo.index(work.device), written, rows.length, vocab)
        free = rules.echo.free_on(work.device)
        counts[:, free[free < vocab]] = 0
        counts.scatter_(1, wanted, 0.0)  # a released word is never discouraged
        work.sub_(rules.echo.penalty * torch.log1p(counts))
    bias = rules.pull_start + (rules.pull_end - rules.pull_start) * step / max(1, rules.max_new_tokens - 1)
    unique = _first_of_each(wanted, vocab)
    work.scatter_(1, unique, work.gather(1, unique) + bias)
    bans = [b for b in (ngram_bans(written, rows.length, rules.no_repeat_ngram, vocab),) if b is not None]
    bans += guard_bans(rules.guard, written, rows.length, vocab)
    if rules.eos.numel():  # a row may not end while one of its released words is missing
        bans.append(torch.where(missing.any(1)[:, None], rules.eos[None, :], vocab))
    if bans:
        banned = torch.cat([b.expand(n_rows, -1) for b in bans], 1)
        banned = torch.where((banned[:, :, None] == wanted[:, None, :]).any(-1), vocab, banned)  # a pull overrides a ban
        work.scatter_(1, banned, NEG_INF)
    forced_token = rows.queue.gather(1, rows.queue_at.clamp(max=rows.queue.shape[1] - 1)[:, None]).squeeze(1)
    return Shaped(work[:, :vocab], rows.forced, forced_token, pull_missing)


def _first_of_each(tokens: torch.Tensor, nothing: int) -> torch.Tensor:
    """``tokens`` ``[rows, M]`` with each row's repeats of a token replaced by ``nothing`` (so that adding to
    the places they name adds once per distinct token)."""
    same = tokens[:, :, None] == tokens[:, None, :]
    place = torch.arange(tokens.shape[1], device=tokens.device)
    earlier = place[None, :] < place[:, None]  # [i, j]: j comes before i
    return torch.where((same & earlier).any(-1), nothing, tokens)


def advance(rows: Rows, tokens: torch.Tensor, pull_missing: torch.Tensor, edges: TokenEdges) -> None:
    """Write each row's chosen token: finish or begin a released word, and update which words are written."""
    arange = torch.arange(tokens.shape[0], device=tokens.device)
    forced = rows.forced
    begins = ~forced[:, None] & pull_missing & (rows.pull_ids[:, :, 0] == tokens[:, None]) & (rows.pull_len > 1)
    first = begins.to(torch.int32).argmax(1)  # the first form (in the pull's order) the token begins
    begun = begins.any(1)
    rows.queue = torch.where(begun[:, None], rows.pull_ids[arange, first], rows.queue)
    rows.queue_len = torch.where(begun, rows.pull_len[arange, first], rows.queue_len)
    rows.queue_at = torch.where(begun, torch.ones_like(rows.queue_at), rows.queue_at + forced.long())
    rows.written.scatter_(1, rows.length[:, None], tokens[:, None])
    rows.length = rows.length + 1
    edges.learn(tokens)
    rows.held = rows.held | (rows.pending & ~edges.starts_word[tokens][:, None])
    rows.pending = _ending_words(rows, edges)


def _ending_words(rows: Rows, edges: TokenEdges) -> torch.Tensor:
    """[rows, n_words + 1] the released words one of whose forms ends the row's tokens, at a word boundary."""
    width = rows.form_ids.shape[2]
    tail = last_tokens(rows.written, rows.length, width, fill=-2)
    same = (tail[:, None, :] == rows.form_ids) | (rows.form_ids == _NO_MATCH)
    ends = same.all(-1) & (rows.form_len > 0) & (rows.form_len <= rows.length[:, None])
    before = rows.length[:, None] - rows.form_len - 1
    previous = rows.written.gather(1, before.clamp(min=0))
    ends &= rows.form_spaced | (before < 0) | ~edges.ends_word[previous.clamp(min=0)]
    pending = torch.zeros_like(rows.pending)
    return pending.scatter_(1, torch.where(ends, rows.form_word, pending.shape[1] - 1), True) & rows.valid
