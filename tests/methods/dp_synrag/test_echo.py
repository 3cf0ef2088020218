"""The echo rule of the public writer (issue 33 item 2, docs/method.md §2.4b): a token that would repeat, word
for word, an n-gram the stage's other documents wrote loses ``penalty · ln(1 + c)`` of its logit; the form's
own tokens and a released word's first token never do; the memory runs across the stage's batches and holds a
resumed run's finished documents. It reads the writer's public drafts only (post-processing)."""

from __future__ import annotations

import math

import pytest
import torch

from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write.echo import Echo, EchoIndex, echo_counts
from tests.helpers import TINY
from core.common.progress import NULL_REPORTER

PAD = -1


@pytest.fixture(scope="module")
def llm():
    from core.models.registry import load_language_model

    return load_language_model(TINY)


def test_echo_counts_what_other_documents_and_the_batch_wrote_after_the_last_tokens():
    remembered = torch.tensor([[1, 2, 3], [1, 2, 3], [1, 2, 4], [9, 2, 5]])
    written = torch.tensor([[5, 1, 2, PAD, PAD], [1, 2, 7, 1, 2]])
    counts = echo_counts(EchoIndex.of(remembered), written, torch.tensor([3, 5]), vocab=10)
    assert counts.shape == (2, 11)
    # both rows end on (1, 2): 3 twice and 4 once remembered; 7 once in the batch (row 1's own window)
    for row in (0, 1):
        assert counts[row, 3] == 2 and counts[row, 4] == 1 and counts[row, 7] == 1
        assert counts[row, 5] == 0  # (9, 2) -> 5 does not follow (1, 2)
    assert counts[:, 10].sum() == 0  # the spare column counts nothing
    # a row's padding is no window: (2, PAD, PAD) and (PAD, PAD) never count
    assert counts.sum() == 2 * 4


def _brute_force_counts(remembered, written, length, vocab):
    """The definition, row by row: each remembered or batch-written n-gram whose first n-1 tokens are the
    row's last n-1 counts once for its last token."""
    n = remembered.shape[1]
    counts = torch.zeros((written.shape[0], vocab + 1))
    batch = [tuple(r[i : i + n]) for r, m in zip(written.tolist(), length.tolist()) for i in range(m - n + 1)]
    table = [tuple(g) for g in remembered.tolist()] + batch
    for row, m in enumerate(length.tolist()):
        if m < n - 1:
            continue
        suffix = tuple(written[row, m - n + 1 : m].tolist())
        for gram in table:
            if gram[:-1] == suffix:
                counts[row, min(gram[-1], vocab)] += 1
    return counts


def test_the_indexed_echo_counts_equal_the_definition_on_random_memories():
    gen = torch.Generator().manual_seed(7)
    for trial in range(20):
        vocab = 12
        remembered = torch.randint(0, vocab, (int(torch.randint(0, 200, (1,), generator=gen)), 3), generator=gen)
        written = torch.randint(0, vocab, (6, 9), generator=gen)
        length = torch.randint(0, 10, (6,), generator=gen)
        written = torch.where(torch.arange(9)[None, :] < length[:, None], written, PAD)
        got = echo_counts(EchoIndex.of(remembered), written, length, vocab)
        assert torch.equal(got, _brute_force_counts(remembered, written, length, vocab)), trial


def test_the_memory_grows_with_each_batch_of_documents():
    echo = Echo(1.0, 3)
    assert echo.grams("cpu").shape == (0, 3)
    echo.add([[1, 2, 3, 4], [5, 6]])
    assert echo.grams("cpu").tolist() == [[1, 2, 3], [2, 3, 4]]  # a document shorter than n adds nothing


def test_a_second_document_does_not_repeat_the_first_word_for_word(llm):
    prompt = ["Write a short note about a fever."]
    silent = pd.stage_echo(llm.chat.tokenizer, "", 0.0)
    first = pd.public_decode_tokens(llm, prompt, [""], 16, decoding=pd.GREEDY, echo=silent)[0]
    again = pd.public_decode_tokens(llm, prompt, [""], 16, decoding=pd.GREEDY, echo=silent)[0]
    assert again == first  # without the echo, greedy writes the same again

    echo = pd.stage_echo(llm.chat.tokenizer, "", 100.0)
    echo.add([first])
    second = pd.public_decode_tokens(llm, prompt, [""], 16, decoding=pd.GREEDY, echo=echo)[0]
    grams = {tuple(first[i : i + 3]) for i in range(len(first) - 2)}
    joints = set(echo.free.tolist())
    assert second != first
    assert not any(tuple(second[i : i + 3]) in grams and second[i + 2] not in joints for i in range(len(second) - 2))
    assert echo.grams("cpu").shape[0] == len(first) - 2 + len(second) - 2  # the decode added its own


def test_the_form_tokens_and_released_words_are_never_discouraged(llm):
    tokenizer = llm.chat.tokenizer
    prompt = ["Write a short note about a fever."]
    first = pd.public_decode_tokens(llm, prompt, [""], 16, decoding=pd.GREEDY)[0]
    # every token of the first document is the form's: nothing is discouraged, the same is written
    free = pd.stage_echo(tokenizer, tokenizer.decode(first), 100.0)
    free.free = torch.tensor(sorted(set(first)), dtype=torch.long)
    free.add([first])
    assert pd.public_decode_tokens(llm, prompt, [""], 16, decoding=pd.GREEDY, echo=free)[0] == first

    words = ("red apple", "river")
    pulls = [pd.WordPull.of(tokenizer, words)]
    base = pd.public_decode(llm, prompt, [""], 14, pulls=pulls, decoding=pd.GREEDY)[0]
    echo = pd.stage_echo(tokenizer, "", 1000.0)
    echo.add([tokenizer.encode(base, add_special_tokens=False)] * 5)
    text = pd.public_decode(llm, prompt, [""], 14, pulls=pulls, decoding=pd.GREEDY, echo=echo)[0]
    assert text != base and pd.missing_words(text, words) == []


def test_shaping_lowers_a_repeating_token_by_the_penalty_times_ln_one_plus_count(llm):
    from core.methods.dp_synrag.write.logit_shaping import GuardTable, Shaping, shape, start_rows, word_forms

    echo = Echo(1.5, 3, free=[8])
    echo.add([[1, 2, 3]] * 4 + [[1, 2, 8]] * 4)
    forms = word_forms(llm.chat.tokenizer, [((), ())], "cpu")
    rows = start_rows([[1, 2]], [""], [()], forms, 10, "cpu")
    rules = Shaping(1.0, 0, GuardTable.of({}, 3, "cpu"), torch.tensor([], dtype=torch.long), 0.0, 0.0, 10, echo)
    logits = torch.zeros((1, 20))
    shaped = shape(logits, rows, rules, 0, 2).logits[0]
    assert math.isclose(float(shaped[3]), -1.5 * math.log(5), rel_tol=1e-5)
    assert float(shaped[8]) == 0.0  # a token of the form is never discouraged
    assert float(shaped[4]) == 0.0 and float(shaped[1]) == 0.0


def test_realise_remembers_across_batches_and_a_resumed_run_s_documents(llm, monkeypatch):
    seen: list[int] = []
    real = rl.public_greedy

    def spy(llm, messages, answer_starts, max_new_tokens, **kw):
        seen.append(kw["echo"].grams("cpu").shape[0])
        return real(llm, messages, answer_starts, max_new_tokens, **kw)

    monkeypatch.setattr(rl, "public_greedy", spy)
    topics = [rt.Topic("fever", ("cough",)) for _ in range(3)]
    done = rl.realise(topics, "Write notes.", ex.shipped_example("clinical_note"), llm, NULL_REPORTER, rl.WriterSettings(8, batch=1))
    assert seen[0] == 0 and seen[1] > 0 and seen[2] > seen[1]  # each batch sees what the earlier ones wrote

    seen.clear()
    rl.realise(topics, "Write notes.", ex.shipped_example("clinical_note"), llm, NULL_REPORTER, rl.WriterSettings(8, batch=1),
               finished={0: done[0]})
    assert seen[0] > 0  # the finished document is remembered before the first new one is written


def test_the_joints_of_a_list_are_spared(llm):
    tokenizer = llm.chat.tokenizer
    joints = set(pd.joint_tokens(tokenizer))
    for text in (",", " and", ".", " the"):
        assert all(t in joints for t in tokenizer.encode(text, add_special_tokens=False)), text
    assert not set(tokenizer.encode(" Gump", add_special_tokens=False)) <= joints
    assert joints <= set(pd.stage_echo(tokenizer, "").free.tolist())
