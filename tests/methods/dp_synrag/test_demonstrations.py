"""Shipped demonstrations of the document forms, shown in rotation, and the guard against their content
(docs/method.md §2.4b; issue 32 item 3).

Each form ships at least three invented demonstrations; document i is shown demonstration i mod n. A
document may keep the form's words but not a demonstration's content: a word it shares with the
demonstration it saw and not with its topic's released words, or a near-form of the demonstration's
names, is refused and its sentence dropped.
"""

from __future__ import annotations

import csv
import re

import pytest

from core.corpus import Unit
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import drafts as dr
from core.methods.dp_synrag.write import example_check as ec
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write.demonstration_guard import guard_of
from core.methods.dp_synrag.write.demonstration_guard import DemonstrationGuard, near_name, near_rare, same_word
from core.common.paths import resources_dir

TASK = "Answer patients' questions about which disease matches their symptoms."
NOTE = ex.shipped_example("clinical_note")


def gout():
    demo = ex.demonstrations(NOTE)[0]
    assert demo.topic.keyword == "gout"  # the labelled examples below retell this one
    return demo, guard_of(demo, f"{NOTE}\n{TASK}")


# -- what is shipped ----------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ex.FORMS)
def test_every_form_ships_at_least_three_different_demonstrations_that_parse(form):
    demos = ex.demonstrations(ex.shipped_example(form))
    assert len(demos) >= 3, form
    assert len({d.topic.keyword for d in demos}) == len(demos)  # different topics
    assert len({d.document for d in demos}) == len(demos)
    lengths = [len(d.document.split()) for d in demos]
    assert max(lengths) >= 1.4 * min(lengths), lengths  # different lengths
    for demo in demos:
        assert demo.topic.related and not pd.missing_words(demo.document, demo.topic.words), demo.topic
        assert "[" not in demo.document
        assert len(dr.sentences_of(demo.document)) >= 1
        assert demo.form_words  # the file's form words reach every demonstration
    assert ex.demonstration(ex.shipped_example(form)) == demos[0]


def test_the_demonstrations_of_a_form_are_about_different_people():
    person = re.compile(r"(?:note\.|Client:)\s+((?:Mrs?\.|Ms\.|[A-Z]\.)?\s*[A-Z][a-z]*\.?),\s*(\d+)")
    for form in ("clinical_note", "case_file"):
        demos = ex.demonstrations(ex.shipped_example(form))
        people = [person.search(d.document) for d in demos]
        assert all(people), form
        assert len({p.group(1) for p in people if p}) == len(demos)  # different names or initials
        assert len({p.group(2) for p in people if p}) == len(demos)  # different ages


def test_the_first_format_of_a_demonstration_file_still_reads_as_one_demonstration():
    old = 'topic = "gout"\nrelated = ["redness"]\navoid = ["Okafor"]\ndocument = "Note. Mr. Okafor has redness."\n'
    (demo,) = ex.parse_demonstrations(old)
    assert demo.topic == rt.Topic("gout", ("redness",)) and demo.avoid == ("Okafor",) and demo.form_words == ()
    new = 'form_words = ["days"]\n[[demonstration]]\ntopic = "a"\nrelated = ["b"]\ndocument = "a b"\n' * 1
    new += '[[demonstration]]\ntopic = "c"\nrelated = ["d"]\ndocument = "c d"\n'
    assert [(d.topic.keyword, d.form_words) for d in ex.parse_demonstrations(new)] == [("a", ("days",)), ("c", ("days",))]
    assert ex.demonstrations("Visit note. [name] says [what].") == ()  # a custodian's own example: none


def test_no_demonstration_is_a_document_of_the_demo_corpora():
    units = []
    for folder, file, column in (("clinic", "notes.csv", "note"), ("movielens", "users.csv", "document")):
        with open(resources_dir() / "demo" / folder / file, newline="", encoding="utf-8") as fh:
            units += [Unit(uid=row["id"], text=row[column]) for row in csv.DictReader(fh)]
    for form in ex.FORMS:
        for demo in ex.demonstrations(ex.shipped_example(form)):
            assert ec.example_problem(demo.document, units) == "", demo.topic


# -- the guard on labelled examples ---------------------------------------------------------------------


RETOLD = ("Consultation note. K. M., 47, reports a painful swollen toe that wakes him at night. "
          "Examination: the joint is warm and tender. Impression: gouty arthritis. Plan: rest and fluids.")
RELEASED_ONLY = ("Consultation note. K. M., 47, reports joint pain and low fever for two weeks, with a sore throat. "
                 "Examination: normal. Impression: drimkitopathy. Plan: rest and fluids, review in 3 weeks.")
TOPIC = rt.Topic("drimkitopathy", ("joint pain", "low fever", "sore throat"))


def test_a_retold_demonstration_in_other_words_is_caught():
    _, guard = gout()
    refused = {w.lower() for w in guard.refused(RETOLD, TOPIC.words)}
    assert {"swollen", "toe", "tender", "gouty"} <= refused
    assert not refused & {"painful", "night", "joint", "warm", "rest", "consultation"}  # everyday or released words


def test_a_document_with_only_released_and_form_words_passes():
    _, guard = gout()
    assert guard.refused(RELEASED_ONLY, TOPIC.words) == []
    text, refused = rl.drop_refused(RELEASED_ONLY, guard, TOPIC.words)
    assert text == RELEASED_ONLY and refused == ()


def test_a_demonstration_word_that_the_topic_released_is_kept():
    _, guard = gout()
    text = "Consultation note. K. M., 47, reports redness and a swollen knee."
    assert guard.refused(text, ("redness", "swollen knee")) == []
    assert guard.refused(text, ("knee",)) == ["redness", "swollen"]


def test_a_near_form_of_a_demonstrations_name_is_caught():
    _, guard = gout()
    assert "Okafor" in guard.names
    for name in ("Okoakafu", "Okafor", "Okafors", "Okaforo"):
        assert guard.refused(f"Seen by Dr. {name} today.", TOPIC.words) == [name], name
    for name in ("Lindqvist", "Oakland", "Okay", "Examination"):
        assert guard.refused(f"Seen by Dr. {name} today.", TOPIC.words) == [], name
    assert near_name("Okoakafu", "Okafor") and not near_name("Otto", "Okafor")
    assert near_rare("okoakafu", "okafor") and not near_rare("lindqvist", "okafor")
    assert same_word("toes", "toe") and same_word("wheezing", "wheeze") and not same_word("pain", "paint")


def test_a_drug_the_writer_was_kept_from_and_wrote_nearly_is_caught():
    # Round 4's first demonstrations named drugs; kept from writing them, the packaged writer wrote these.
    guard = DemonstrationGuard.of(
        "Consultation note. Mrs. Halvorsen, 74, reports dizziness since amlodipine was started. Impression: "
        "postural hypotension. Plan: allopurinol 100 mg daily.", ("postural hypotension", "amlodipine"), (), NOTE)
    for text, word in (("He had pain after am lovodipine started.", "lovodipine"),
                       ("Worse since amlotine was started.", "amlotine"),
                       ("A postulantary problem.", "postulantary"),
                       ("Treated with allopaquinone tablets.", "allopaquinone"),
                       ("Seen with Mrs. Halverson.", "Halverson")):
        assert guard.refused(text, TOPIC.words) == [word], word
    assert guard.refused("Treated with tregedcillin and amoxicillin; he is dizzy.", TOPIC.words) == []


def test_the_demonstrations_several_word_details_are_caught_whole():
    _, guard = gout()
    assert guard.refused("It began four days ago.", TOPIC.words) == ["four days"]
    assert guard.refused("It began two days ago.", TOPIC.words) == []  # the form's durations stay writable


def test_a_refused_sentence_is_dropped_and_the_rest_kept():
    _, guard = gout()
    text, refused = rl.drop_refused(RETOLD, guard, TOPIC.words)
    assert refused and "toe" in refused
    assert text == "Consultation note. Examination: the joint is warm. Plan: rest and fluids."
    assert guard.refused(text, TOPIC.words) == []
    long = "Consultation note. K. M., 47, reports joint pain for two weeks after a fall, with a tender knee."
    assert rl.drop_refused(long, guard, TOPIC.words) == (
        "Consultation note. K. M., 47, reports joint pain for two weeks after a fall.", ("tender",))


def test_each_demonstration_guards_its_own_content_and_bans_it_while_writing():
    demos = ex.demonstrations(NOTE)
    guards = [guard_of(d, f"{NOTE}\n{TASK}") for d in demos]
    asthma = "Consultation note. K. M., 47, reports wheeze, worse after football, and uses an inhaler."
    assert guards[0].refused(asthma, TOPIC.words) == []  # not the gout demonstration's content
    assert {"wheeze", "football", "inhaler"} <= set(guards[1].refused(asthma, TOPIC.words))
    assert {"toe", "okafor", "tender"} <= set(guards[0].banned_words)
    assert not {"days", "weeks", "review", "used", "pain"} & set(guards[0].banned_words)  # form and everyday words


def test_another_demonstration_of_the_form_is_guarded_too():
    """A document shown the gout demonstration that takes the asthma one's content loses that sentence: a
    demonstration-only word of any demonstration of the form is no content of the topic."""
    demos = ex.demonstrations(NOTE)
    guards = [guard_of(d, f"{NOTE}\n{TASK}") for d in demos]
    text = ("Consultation note. K. M., 47, reports back stiffness for two weeks. "
            "She uses an inhaler after football.")
    kept, refused = rl.drop_shown_and_others(text, guards, 0, TOPIC.words)
    assert "inhaler" not in kept and "football" not in kept and {"inhaler", "football"} <= set(refused)
    assert "back stiffness" in kept
    assert rl.drop_shown_and_others(RELEASED_ONLY, guards, 0, TOPIC.words) == (RELEASED_ONLY, ())


# -- rotation ---------------------------------------------------------------------------------------------


def test_documents_are_shown_the_demonstrations_in_rotation(monkeypatch):
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER
    from core.specs.runspec import ModelChoice

    seen: list[str] = []
    real = rl.public_greedy

    def recording(llm, messages, *args, **kwargs):
        seen.extend(messages)
        return real(llm, messages, *args, **kwargs)

    monkeypatch.setattr(rl, "public_greedy", recording)
    demos = ex.demonstrations(NOTE)
    topics = [rt.Topic(f"topic{i}", ("cough",)) for i in range(len(demos) + 2)]
    llm = load_language_model(ModelChoice(source="tiny-random"))
    done = rl.realise(topics, TASK, NOTE, llm, NULL_REPORTER, rl.WriterSettings(6))
    assert [d.shown for d in done] == [i % len(demos) for i in range(len(topics))]
    first = {m for m in seen if "Topic: topic0." in m}
    assert first and all(demos[0].document in m for m in first)
    for i, topic in enumerate(topics):
        prompts = [m for m in seen if f"Topic: {topic.keyword}." in m]
        shown = demos[i % len(demos)].document
        assert prompts and all(shown in m for m in prompts), i
        assert not any(other.document in m for m in prompts for other in demos if other.document != shown)
    assert len({m.split("Topic: topic")[0] for m in seen}) == len(demos)  # different documents, different demonstrations
    for d, topic in zip(done, topics):
        assert not pd.missing_words(d.text, topic.words)  # every released word still appears


def test_a_custodians_own_example_has_no_demonstration_and_no_rotation():
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER
    from core.specs.runspec import ModelChoice

    llm = load_language_model(ModelChoice(source="tiny-random"))
    done = rl.realise([rt.Topic("fever", ("cough",))], TASK, "Visit note. [name] has [what].", llm, NULL_REPORTER,
                      rl.WriterSettings(6))
    assert done[0].shown == -1 and done[0].refused == ()


def test_the_certificate_quotes_every_demonstration_the_writer_may_have_seen():
    from core.methods.dp_synrag.method import generation_notes
    from core.specs.runspec import DPSynRAGSpec

    notes = " ".join(generation_notes(DPSynRAGSpec(text="realised"), NOTE))
    demos = ex.demonstrations(NOTE)
    assert all(d.document in notes for d in demos)
    assert re.search(rf"one of Privet's {len(demos)} shipped", notes)
