"""Topic shares (core/evaluation/roles.py): the total variation between the conditions a corpus's documents
name first and the real notes' mix."""

from core.evaluation.roles import NO_CONDITION, first_condition, topic_share_tv, topic_shares, topic_tv_floor

TRUTH = {"gout": "condition", "asthma": "condition", "wheeze": "symptom", "colchicine": "drug"}


def test_first_condition_is_the_earliest_whole_word():
    assert first_condition("Impression: asthma. A history of gout.", ["gout", "asthma"]) == "asthma"
    assert first_condition("Wheeze at night; asthmatic parents.", ["gout", "asthma"]) == NO_CONDITION


def test_shares_count_documents_without_a_condition():
    shares = topic_shares(["gout", "gout again", "wheeze only", "asthma"], ["gout", "asthma"])
    assert shares == {"gout": 0.5, NO_CONDITION: 0.25, "asthma": 0.25}


def test_tv_is_zero_for_the_same_mix_and_grows_with_a_flat_or_symptom_only_corpus():
    real = ["gout"] * 6 + ["asthma"] * 2
    assert topic_share_tv(["gout a", "gout b", "gout c", "asthma d"], real, TRUTH) == 0.0
    flat = topic_share_tv(["gout", "asthma"], real, TRUTH)
    assert abs(flat - 0.25) < 1e-9  # 1/2 against 3/4
    assert topic_share_tv(["wheeze", "wheeze"], real, TRUTH) == 1.0
    assert topic_share_tv([], real, TRUTH) is None


def test_the_floor_is_the_real_share_of_conditions_never_named_and_tv_never_below_it():
    real = ["gout"] * 5 + ["asthma"] * 2 + ["ulcer"] * 1
    truth = {**TRUTH, "ulcer": "condition"}
    corpora = [["gout a", "gout b"], ["gout", "wheeze"], ["gout", "asthma", "ulcer"], ["wheeze"]]
    floors = [topic_tv_floor(c, real, truth) for c in corpora]
    assert floors == [3 / 8, 3 / 8, 0.0, 1.0]  # asthma and ulcer never named; nothing missing; all missing
    for corpus, floor in zip(corpora, floors):
        assert topic_share_tv(corpus, real, truth) >= floor - 1e-12
    assert topic_share_tv(corpora[0], real, truth) == floors[0]  # what it names takes all the rest: the floor is the distance
    assert topic_tv_floor([], real, truth) is None
