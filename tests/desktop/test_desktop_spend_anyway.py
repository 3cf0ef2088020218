"""Issue 22, under SPEC §6 (issue 57): the Confirm page shows when a run would spend for nothing; it needs an
explicit "Spend anyway" only when about 0 topics are expected even at a public bound on the units stated in
the settings. The forecast at the count loaded warns, it never decides whether a run goes (pytest-qt)."""

from __future__ import annotations

from tests.desktop.test_desktop_wizard import load_data, next_enabled, walk_to_confirm


def test_about_0_topics_at_the_stated_bound_needs_an_explicit_spend_anyway(wizard, tmp_path, privet_home):
    load_data(wizard, tmp_path)
    wizard.controller.spec.privacy.max_units = 40  # a public bound the custodian states (as a spec file may)
    walk_to_confirm(wizard, tmp_path, epsilon=4.0)  # a topic would need most of the 40 units even at the bound
    page = wizard.confirm_page
    box = page.spend_anyway
    assert box.needed and not box.isHidden() and not box.box.isHidden()
    text = box.text.text()
    assert "expected to find about 0 topics" in text and "public-only baseline" in text
    assert "even with the 40 units at most that the settings state in advance" in text
    assert "ε" in text and "Add documents" in text  # what would help, from core's advice
    assert box.box.isChecked() and wizard.controller.spec.privacy.spend_anyway  # ticked by walk_to_confirm
    box.box.setChecked(False)
    assert not next_enabled(wizard) and not wizard.controller.spec.privacy.spend_anyway
    assert "Spend anyway" in page.message.text() and "raise ε" in page.message.text()
    box.box.setChecked(True)
    assert next_enabled(wizard) and wizard.controller.spec.privacy.spend_anyway
    page.initializePage()  # coming back to the page asks again
    assert not box.box.isChecked() and not wizard.controller.spec.privacy.spend_anyway


def test_about_0_topics_at_the_loaded_count_only_warns(wizard, tmp_path, privet_home):
    walk_to_confirm(wizard, tmp_path, epsilon=4.0)  # no bound stated: 40 notes expect about 0 topics
    box = wizard.confirm_page.spend_anyway
    assert box.warned and not box.needed and not box.isHidden() and box.box.isHidden()
    text = box.text.text()
    assert "expected to find about 0 topics" in text
    assert "of the 40 units" in text or "more than the 40 units loaded" in text  # a share, or a count past 100 %
    assert "does not stop the run on this figure" in text and "Add documents" in text
    assert next_enabled(wizard) and not wizard.controller.spec.privacy.spend_anyway  # the count decides nothing


def test_a_plan_that_expects_topics_shows_no_spend_anyway_block(wizard, tmp_path, privet_home):
    walk_to_confirm(wizard, tmp_path, epsilon=10.0, n=600)
    box = wizard.confirm_page.spend_anyway
    assert not box.needed and not box.warned and box.isHidden() and next_enabled(wizard)
    assert wizard.confirm_page.plan_result.topic_forecast.expected_topics >= 0.5
