"""Which language the API's customer texts are in: Accept-Language with its q-values."""
import pytest

from holdfast.entry.http import preferred_language


@pytest.mark.parametrize("header, language", [
    (None, "en"),
    ("", "en"),
    ("ru", "ru"),
    ("ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7", "ru"),
    ("en-GB,en;q=0.9,ru;q=0.8", "en"),
    ("de-DE,de;q=0.9,ru;q=0.5,en;q=0.4", "ru"),
    ("en;q=0.2, ru;q=0.8", "ru"),
    ("ru;q=0, en;q=0.1", "en"),
    ("ru;q=0", "en"),
    ("ru;q=0.1, ru-RU", "ru"),
    ("fr, de", "en"),
    ("*", "en"),
    ("*;q=0.5, ru;q=0.1", "en"),
    ("*;q=0.5, en;q=0", "ru"),
    ("ru;q=abc, en;q=0.1", "en"),
    ("ru;q=2, en;q=0.1", "en"),
    ("ru;q=nan, en;q=0.1", "en"),
    ("RU-ru", "ru"),
    ("en;q=0.5, ru;q=0.5", "en"),
    ("ru;q=0.5, en;q=0.5", "ru"),
    (";;,,=", "en"),
])
def test_preferred_language_follows_q_values(header, language):
    headers = {"Accept-Language": header} if header is not None else {}
    assert preferred_language(headers) == language


def test_preferred_language_reads_the_header_whatever_its_case():
    assert preferred_language({"accept-language": "ru"}) == "ru"
    assert preferred_language(None) == "en"
