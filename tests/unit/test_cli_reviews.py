"""`holdfast.tools.cli reviews` lists every booking in review: it follows GET /admin/reviews' pages."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from holdfast.tools import cli


def test_the_reviews_command_walks_every_page(monkeypatch, capsys):
    pages = {None: (["b-1", "b-2"], "c-1"), "c-1": (["b-3"], None)}
    asked = []

    def answer(api, key, method, path, body=None):
        cursor = (parse_qs(urlsplit(path).query).get("cursor") or [None])[0]
        asked.append(cursor)
        ids, following = pages[cursor]
        return 200, {"reviews": [{"booking_id": i, "updated_at": "t", "review": {"reason": "late"}} for i in ids],
                     "next_cursor": following, "gate_cases": []}

    monkeypatch.setattr(cli, "_call", answer)
    cli.main(["--api", "http://127.0.0.1:9", "--key", "k", "reviews"])
    out = capsys.readouterr().out
    assert asked == [None, "c-1"]
    assert [line.split()[0] for line in out.splitlines()[:3]] == ["b-1", "b-2", "b-3"]
    assert "3 booking(s) in review" in out
