"""One definition of a link (core/common/links.py) for the keyword extractors, the junk rule, realisation and RPSG."""

import pytest

from core.common.junk import junk_reasons
from core.common.links import LINK, SCHEMED_LINK, has_link, without_links
from core.methods.dp_synrag.write.drafts import clean_draft
from core.methods.rpsg.pii import mask_pii

LINKS = ["https://www.example.com/notes", "http://nyti.ms/1abcD", "ftp://files.example.org/a", "www.cdc.gov/ebola",
         "bit.ly/xyZ", "reut.rs/1xYz", "amazon.com", "index.html"]
NOT_LINKS = ["rated 8.5/10 overall", "3.5 mg twice a day", "U.S. adults", "U.S./Mexico border", "e.g. in N.Y.",
             "Dr. K. M., 47", "and/or", "24/7 care"]


@pytest.mark.parametrize("link", LINKS)
def test_a_link_is_found_whole(link):
    match = LINK.search(f"See {link}. Then more.")
    assert match is not None and match.group() == link  # the sentence's full stop is not part of it


@pytest.mark.parametrize("text", NOT_LINKS)
def test_numbers_abbreviations_and_slashes_are_not_links(text):
    assert not has_link(text) and without_links(text) == text


def test_handles_and_retweet_marks_are_removed_with_the_links():
    assert without_links("RT @nprhealth: Flu season http://n.pr/x via @cdc").split() == ["Flu", "season", "via"]
    assert without_links("mail jo@example.com") == "mail jo@ "  # an e-mail's domain is a link, its user not a handle


def test_schemed_links_leave_an_e_mail_to_its_own_recogniser():
    assert SCHEMED_LINK.search("jo@example.com") is None
    assert SCHEMED_LINK.search("portal https://x.org/a?b=1).").group() == "https://x.org/a?b=1"


def test_every_user_of_links_reads_the_one_definition():
    """The junk rule counts a link, realisation drops the sentence holding one, RPSG masks it."""
    assert "URL" in junk_reasons("The council met today and the minutes are at bit.ly/abc for everyone to read.")
    assert "URL" not in junk_reasons("The council met today and rated the plan 8.5/10 after a long debate on it.")
    assert "bit.ly" not in clean_draft("The council met today. Minutes at bit.ly/abc for all. The vote was close.")
    masked, counts = mask_pii("Results are on https://portal.example.org/results today.")
    assert "portal.example.org" not in masked and counts["URL"] == 1


def test_html_markup_a_web_review_keeps_is_no_word_of_it():
    """Round 4, session 12: 800 food reviews released "br" (of "<br />") as a topic ("Review of br.")."""
    text = "Good for health( we think)<br /><br />It may be pricey &amp; sweet. <p class=\"x\">Yes</p> 3 < 5."
    words = without_links(text).split()
    assert words == ["Good", "for", "health(", "we", "think)", "It", "may", "be", "pricey", "sweet.", "Yes", "3", "<", "5."]
