"""The page "Against the authors' code" (icml25.book.site.authors): its records and their checks."""

from __future__ import annotations

import json

import pytest

from icml25.book.site import authors
from icml25.common import paths


def test_every_chapter_has_one_well_formed_record_and_the_page_is_current():
    found = authors.records()
    chapters = sorted(p.name for p in paths.CHAPTERS.glob("[0-9][0-9]-*") if p.is_dir())
    assert [r["chapter"] for r in found] == chapters
    ran = [r for r in found if r["ran"]]
    assert len(ran) >= 10  # the issue's bar: ten chapters beside their authors' code
    page = authors.PAGE.read_text()
    assert page == authors.render(found), "run `python -m icml25.book ledger`"
    for record in found:
        assert f"({authors.anchor(record['chapter'])})=" in page
    links = authors.claim_links(found)
    assert ("11-sotdd", "authors-distance") in links


def _good() -> dict:
    return json.loads((paths.DATA / "reference/sotdd/comparison.json").read_text())


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("taught"), "keys missing"),
    (lambda r: r.update(extra=1), "unknown"),
    (lambda r: r.update(commit="d5ca705"), "40-hex commit"),
    (lambda r: r.update(agrees=[]), "what agrees"),
    (lambda r: r.update(summary="x" * 91), "at most 90 characters"),
    (lambda r: r.update(agrees=[{"what": "x"}]), "'what' and 'figure'"),
    (lambda r: r.update(tests=["tests/test_sotdd.py::no_such_test"]), "no test"),
    (lambda r: r.update(reference_files=["data/reference/sotdd/none.npz"]), "does not exist"),
    (lambda r: r.update(claims=["no-such-claim"]), "neither tests nor headline claims"),
    (lambda r: r.update(chapter="99-none"), "no chapter"),
    (lambda r: r.update(ran=False, why_not=None), "says why"),
    (lambda r: r.update(ran=True, repository=None), "names the repository"),
])
def test_a_bad_record_is_refused_with_what_is_wrong(tmp_path, change, message):
    record = _good()
    change(record)
    (tmp_path / "sotdd").mkdir()
    (tmp_path / "sotdd" / "comparison.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message):
        authors.records(tmp_path)


def test_two_records_for_one_chapter_are_refused(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "comparison.json").write_text(json.dumps(_good()))
    with pytest.raises(ValueError, match="more than one record"):
        authors.records(tmp_path)
