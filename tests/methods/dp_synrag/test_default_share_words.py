"""The certificate's and the wizard's words for a budget share left at 0 state the share the plan takes: the
numbers in ``PARAMETER_MEANINGS`` are the plan's, with and without a token stage."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from core.methods.dp_synrag.parameter_words import PARAMETER_MEANINGS
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.specs.document import DocumentSpec
from core.specs.dp_synrag import DPSynRAGSpec

_NUMBER = r"(\d+(?:\.\d+)?)"


def _realised_ratios(name: str) -> tuple[float, float, float, float]:
    """(topics, descriptions, phrases, forms) as the words for ``name`` state them without a token stage."""
    found = re.search(rf"without a token stage {_NUMBER} : {_NUMBER} : {_NUMBER} for topics, their descriptions and "
                      rf"phrases, and {_NUMBER} for the corpus's own forms", PARAMETER_MEANINGS[name])
    assert found, f"{name}: the words state no default share without a token stage"
    hist, ck, p, forms = (float(x) for x in found.groups())
    return hist, ck, p, forms


def _with_tokens(name: str) -> float:
    found = re.search(rf"with one {_NUMBER}", PARAMETER_MEANINGS[name])
    assert found, f"{name}: the words state no default share with a token stage"
    return float(found.group(1))


def _default(name: str) -> float:
    found = re.search(rf"0 = (?:the )?default,? {_NUMBER}", PARAMETER_MEANINGS[name])
    assert found, f"{name}: the words state no default"
    return float(found.group(1))


def test_the_default_spec_takes_the_shares_its_words_state():
    spec = DPSynRAGSpec()
    assert spec.text == "realised" and not spec.token_stage and spec.discover_phrases and not spec.refine
    plan = plan_dp_synrag(spec, 4.0, 1e-6)
    left = 1.0 - plan.size_fraction - plan.length_fraction  # what the counts leave the topic stages
    assert spec.discovers_forms_with(DocumentSpec())
    for name in ("hist_fraction", "cluster_keywords_fraction", "phrases_fraction"):
        hist, ck, p, forms = _realised_ratios(name)
        total = hist + ck + p + forms
        assert plan.forms_fraction == pytest.approx(forms / total * left, rel=1e-12), name
        assert plan.hist_fraction == pytest.approx(hist / total * left, rel=1e-12), name
        assert plan.cluster_keywords_fraction == pytest.approx(ck / total * left, rel=1e-12), name
        assert plan.phrases_fraction == pytest.approx(p / total * left, rel=1e-12), name


def test_a_token_stage_takes_the_shares_its_words_state():
    plan = plan_dp_synrag(replace(DPSynRAGSpec(), text="private"), 4.0, 1e-6)
    assert plan.cluster_keywords_fraction == pytest.approx(_with_tokens("cluster_keywords_fraction"), rel=1e-12)
    assert plan.phrases_fraction == pytest.approx(_with_tokens("phrases_fraction"), rel=1e-12)


def test_the_counts_and_delta_take_the_shares_their_words_state():
    spec = replace(DPSynRAGSpec(), length="dp")
    assert spec.size_count
    plan = plan_dp_synrag(spec, 4.0, 1e-6)
    assert plan.size_fraction == pytest.approx(_default("size_fraction"), rel=1e-12)
    assert plan.length_fraction == pytest.approx(_default("length_fraction"), rel=1e-12)
    assert plan.delta_phrases / plan.delta == pytest.approx(_default("phrases_delta_fraction"), rel=1e-12)
