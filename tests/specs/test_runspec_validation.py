"""Run-spec validation: every setting's type and range is checked when the spec is loaded."""

from __future__ import annotations

import math

import pytest

from core.common.errors import PrivetError
from core.specs.runspec import DPSynRAGSpec, PrivacySpec, RunSpec, check_value, number, rules_of, whole


def _spec(**sections) -> dict:
    data = {"data": {"path": "notes.csv"}}
    for section, values in sections.items():
        data.setdefault(section, {}).update(values)
    return data


@pytest.mark.parametrize(
    "section, name, value, words",
    [
        ("dp_synrag", "R", -1, "out of range"),
        ("dp_synrag", "R", "4", "must be a number"),
        ("dp_synrag", "R", 4.5, "whole number"),
        ("dp_synrag", "R", True, "must be a number"),
        ("dp_synrag", "k", -1, "out of range"),
        ("dp_synrag", "K", 0, "out of range"),
        ("dp_synrag", "L", -2, "out of range"),
        ("dp_synrag", "T", 0, "out of range"),
        ("dp_synrag", "tau", 0.0, "out of range"),
        ("dp_synrag", "tau", math.inf, "finite"),
        ("dp_synrag", "theta_fraction", 1.0, "out of range"),
        ("dp_synrag", "self_filter", "yes", "true or false"),
        ("dp_synrag", "domain_lists", "a.txt", "list of texts"),
        ("privacy", "epsilon", True, "must be a number"),
        ("privacy", "epsilon", "4", "must be a number"),
        ("privacy", "epsilon", 0, "out of range"),
        ("privacy", "epsilon", -1.0, "out of range"),
        ("privacy", "epsilon", math.nan, "finite"),
        ("privacy", "epsilon", 1e9, "out of range"),
        ("privacy", "delta", -0.1, "out of range"),
        ("privacy", "delta", 1.0, "out of range"),
        ("privacy", "conversion", "medium", "not one of"),
        ("data", "path", 5, "must be text"),
        ("data", "max_unit_chars", 0, "out of range"),
        ("rpsg", "nll_percentile", 101.0, "out of range"),
        ("rpsg", "pii_patterns", {"ID": ["("]}, "regular expression"),
        ("output", "formats", ["pdf"], "allowed"),
        ("output", "overwrite", 1, "true or false"),
        ("llm", "source", "internet", "not one of"),
    ],
)
def test_nonsense_is_refused_at_load_with_the_setting_named(section, name, value, words):
    with pytest.raises(PrivetError) as info:
        RunSpec.from_dict(_spec(**{section: {name: value}}))
    message = info.value.user_message()
    assert f"[{section}] {name}" in message and words in message, message
    assert "nothing was loaded or charged" in message


def test_every_problem_is_listed_at_once():
    with pytest.raises(PrivetError) as info:
        RunSpec.from_dict(_spec(dp_synrag={"R": -1, "k": -1}, privacy={"epsilon": "x"}))
    message = str(info.value)
    assert "R" in message and "] k" in message and "epsilon" in message


def test_section_given_as_a_value_is_refused():
    with pytest.raises(PrivetError, match="must be a table"):
        RunSpec.from_dict({"privacy": 5})


def test_valid_values_pass_and_are_normalised():
    spec = RunSpec.from_dict(_spec(privacy={"epsilon": 4, "delta": 0}, dp_synrag={"R": 7.0}))
    assert spec.privacy.epsilon == 4.0 and isinstance(spec.privacy.epsilon, float)
    assert spec.dp_synrag.R == 7 and isinstance(spec.dp_synrag.R, int)
    assert spec.problems() == []
    assert RunSpec().problems() == []  # the defaults are valid


def test_values_set_in_code_are_checked_before_a_run():
    spec = RunSpec()
    spec.dp_synrag.R = -1
    spec.privacy.epsilon = True
    problems = spec.problems()
    assert any("[dp_synrag] R" in p for p in problems) and any("[privacy] epsilon" in p for p in problems)
    with pytest.raises(PrivetError):
        spec.check()


def test_unknown_method_is_refused():
    with pytest.raises(PrivetError, match="Unknown method"):
        RunSpec.from_dict({"method": "magic"})


def test_loud_warning_above_a_sane_epsilon():
    spec = RunSpec()
    assert spec.warnings() == []
    spec.privacy.epsilon = 50.0
    assert any("weak" in w and "ε = 50" in w for w in spec.warnings())


def test_every_field_has_a_rule_so_new_fields_are_checked():
    for cls in (RunSpec, PrivacySpec, DPSynRAGSpec):
        rules = rules_of(cls)
        assert "test_mode_seed" in rules or cls is not RunSpec
        assert all(rule.kind in ("whole", "number", "text", "flag", "texts", "mapping") for rule in rules.values())


def test_rule_helpers():
    assert check_value(whole("x"), 3) == (3, "")
    assert check_value(whole("x"), False)[1]
    assert check_value(number("x", low=0, open_low=True, zero_default=True), 0) == (0.0, "")
    assert "≥ 1" in check_value(whole("x"), 0)[1]


def test_certificate_never_calls_a_huge_epsilon_protective():
    from core.certificate.build import plain_summary
    from core.certificate.privacy_record import PrivacyRecord

    fields = {f: None for f in PrivacyRecord.__dataclass_fields__}
    record = PrivacyRecord.__new__(PrivacyRecord)
    record.__dict__.update(fields)
    record.__dict__.update(unit_kind="document", epsilon_tight=1e9, delta=1e-5, end_to_end_dp=True,
                           method="dp_synrag")
    text = " ".join(plain_summary(record))
    assert "inf" not in text.replace("information", "")
    assert "reveals little" not in text
    assert "no meaningful protection" in text
    record.epsilon_tight = 1.0
    text = " ".join(plain_summary(record))
    assert "reveals little" in text and "2.7 times" in text
