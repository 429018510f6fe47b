"""The web UI as a research instrument, second part (issue 22), in Chromium: a run row's gold-answer facts
(fetched per row as it scrolls into view), a program step's facts marked on the timeline when the step is
selected, links that carry the KG fingerprint and server version (and say on the page when they differ), the
model being loaded shown while a first question waits for it, the timeline's labels never overlapping at
50+ facts, and a screenshot of every view at both widths (under pytest's temporary folder)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from slow_loader import slow_minilm
from stubs import make_run
from test_ui_research import N_VISITORS, OVERFLOW, VISITS, _post, ask, open_page, url_params, wait_answer
from ui_shots import artifacts, shoot

from tkgqa import __version__
from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.server import serve_in_thread

#: Every text the timeline chart draws (lane names, axis ticks, marks), as boxes on the canvas (as tall as
#: the font at least: zrender's own text box can be lower than the glyphs); then how many pairs of them
#: overlap by more than a pixel each way.
LABEL_OVERLAPS = """() => {
  const zr = charts.timeline.getZr(); const boxes = [];
  for (const d of zr.storage.getDisplayList(true)) {
    if (d.type !== 'tspan' || !d.style || !d.style.text || d.invisible || d.ignore) continue;
    const r = d.getBoundingRect().clone(); const m = d.getComputedTransform(); if (m) r.applyTransform(m);
    const px = String(d.style.font || "").match(/([0-9.]+)px/);  // a box at least as tall as the font
    const h = Math.max(r.height, px ? parseFloat(px[1]) : 12); const cy = r.y + r.height / 2;
    if (r.width > 0) boxes.push([r.x, cy - h / 2, r.x + r.width, cy + h / 2, d.style.text]);
  }
  let overlaps = 0; const pairs = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i], boxes[j]];
    const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
    const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
    if (w > 1 && h > 1) { overlaps++; pairs.push([a[4], b[4]]); }
  }
  return { labels: boxes.length, overlaps, pairs: pairs.slice(0, 5) };
}"""
HIGHLIGHTED = """() => charts.timeline.getOption().series[0].data
  .filter((d) => d.value[5] === 1).map((d) => d.fact)"""
DRAWN = "() => charts.timeline.getOption().series[0].data.map((d) => d.fact)"


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo KG with appends on, 56 visits to Japan in 2013 added, and a runs folder of two runs."""
    root = tmp_path_factory.mktemp("lab_runs")
    make_run(root, "a_symbolic")
    make_run(root, "b_symbolic")
    settings = ServiceSettings(allow_append=True, ephemeral_append=True, runs_dir=str(root))
    with serve_in_thread(create_app(settings=settings)) as url:
        assert _post(url + "/api/kg/facts", {"lines": VISITS})["added"] == N_VISITORS
        yield url


def _status(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/api/status", timeout=30) as res:
        return dict(json.loads(res.read()))


def _open_run(page: Any, name: str) -> None:
    page.click(f"#runs-list a.entity >> text={name}")
    page.wait_for_selector("#run-filters button")
    page.click("#run-filters button[data-outcome=all]")
    page.wait_for_function("() => document.querySelector('#run-results').textContent.includes('4 questions')")


def test_every_run_row_shows_its_gold_answers_facts(page: Any, lab_url: str, width: int) -> None:
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/gold-facts" in r.url else None)
    open_page(page, lab_url)
    page.wait_for_selector("#runs-list a.entity")
    _open_run(page, "a_symbolic")
    cells = page.locator("#run-results td.gold-facts")
    assert cells.count() == 4
    for cell in cells.all():  # fetched as each row comes into view
        cell.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('#run-results td.gold-facts')].every((c) => c.dataset.state)"
    )
    rows = {c.get_attribute("data-qid"): c for c in cells.all()}
    right = rows["1"]
    assert right.get_attribute("data-state") == "facts"
    items = right.locator("li").all_inner_texts()
    assert 1 <= len(items) <= 3 and all("Barack Obama" in t and "China" in t for t in items)
    assert int(right.get_attribute("data-total")) > len(items) and "of" in right.inner_text()
    assert rows["3"].get_attribute("data-state") == "none" and "no fact found" in rows["3"].inner_text()
    qids = [parse_qs(urlsplit(u).query)["qid"][0] for u in asked]  # one bounded request per row shown
    assert set(qids) == {"1", "2", "3", "4"} and len(qids) <= 5 and all("limit=3" in u for u in asked)
    shoot(page, f"runs-gold-facts-{width}")
    assert page.evaluate(OVERFLOW) <= 0 and page.errors.uncaught == []


def _match_expected(args: list[str], facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The facts a ``match(s, rel|~inv|<->, o)`` step yields, written out independently of the page."""
    s, rel, o = args
    parts = rel.split("|")

    def is_(arg: str, name: str, label: str) -> bool:
        return arg in ("?", "*", name, label)

    def ends(f: dict[str, Any], swap: bool) -> bool:
        a, b = ("object", "subject") if swap else ("subject", "object")
        return is_(s, f[a], f[a + "_label"]) and is_(o, f[b], f[b + "_label"])

    out = []
    for f in facts:
        direct = f["relation_label"] in parts or f["relation"] in parts
        inverse = "~" + f["relation_label"] in parts or "~" + f["relation"] in parts
        if (direct and (ends(f, False) or ("<->" in parts and ends(f, True)))) or (inverse and ends(f, True)):
            out.append(f)
    return out


def _keys(facts: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return sorted((f["subject"], f["relation"], f["object"], f.get("start") or "") for f in facts)


def test_selecting_a_program_step_marks_its_facts_on_the_timeline(
    page: Any, demo_url: str, width: int
) -> None:
    open_page(page, demo_url)
    ask(page, "After Barack Obama, who was the first to visit Cuba?")
    steps = page.locator("#program .node[role=button]")
    matches = [s for s in steps.all() if s.inner_text().startswith("match") and s.is_visible()]
    assert matches
    drawn = page.evaluate(DRAWN)
    for step in matches:
        args = [a.strip() for a in re.sub(r"^match\s*", "", step.inner_text()).split("\n")[0].split(",")][:3]
        args[2] = re.sub(r"\d+ facts?$", "", args[2]).strip()
        step.click()
        assert step.get_attribute("aria-pressed") == "true"
        marked = page.evaluate(HIGHLIGHTED)
        assert _keys(marked) == _keys(_match_expected(args, drawn))
        assert page.get_attribute("#timeline", "data-highlighted") == str(len(marked))
    first = page.locator("#program .node[role=button]", has_text=re.compile(r"^first")).first
    first.click()
    chosen = page.evaluate(HIGHLIGHTED)
    assert chosen and len({f["start"] for f in chosen}) == 1  # the earliest of the pool: the winner
    assert "marked on the timeline" in page.inner_text("#step-facts")
    assert page.evaluate(LABEL_OVERLAPS)["overlaps"] == 0  # lanes, axis, the reference mark
    shoot(page, f"program-step-selected-{width}")
    first.click()  # selected again: cleared
    assert page.evaluate(HIGHLIGHTED) == [] and page.get_attribute("#timeline", "data-highlighted") == "0"
    assert page.inner_text("#step-facts") == "" and page.errors.uncaught == []


def test_links_carry_the_kg_and_version_and_say_when_they_differ(page: Any, lab_url: str, width: int) -> None:
    status = _status(lab_url)
    open_page(page, lab_url)
    ask(page, "Who visited Japan in 2013?")
    page.click("#more-evidence")  # request options: in the link too
    page.wait_for_function("() => document.getElementById('evidence-cover').textContent.includes('all ')")
    params = url_params(page)
    assert params["kg"] == status["kg_fingerprint"] and params["v"] == __version__ == status["version"]
    assert params["method"] == "symbolic" and json.loads(params["opt"]) == {"max_evidence": 1000}
    assert page.inner_text("#link-notice") == ""
    # the same link opened as is: same answer, no notice
    page.goto(page.url)
    wait_answer(page)
    assert page.inner_text("#link-notice") == "" and "all " in page.inner_text("#evidence-cover")
    # a link made on other facts with another version: answered here, and said so on the page
    link = {"q": "Who visited China in November 2014?", "method": "symbolic", "kg": "0" * 16, "v": "0.0.1"}
    page.goto(lab_url + "/?" + urlencode(link))
    wait_answer(page)
    notice = page.inner_text("#link-notice")
    assert "0" * 16 in notice and status["kg_fingerprint"] in notice and "0.0.1" in notice
    assert __version__ in notice and page.locator("#answers li.answer").count() >= 1
    shoot(page, f"link-other-kg-{width}")
    page.fill("#question", "Who visited Cuba?")  # a question of the reader's own: the notice goes
    page.click("#ask-button")
    wait_answer(page)
    assert page.inner_text("#link-notice") == "" and url_params(page)["kg"] == status["kg_fingerprint"]
    hostile = '<img src=x onerror="window.tkgqaPwned=1">'  # what a link says is text on the page
    page.goto(lab_url + "/?" + urlencode(link | {"v": hostile}))
    wait_answer(page)
    assert hostile in page.inner_text("#link-notice") and page.locator("#link-notice img").count() == 0
    assert page.evaluate("() => window.tkgqaPwned === undefined")
    bad = {"q": "Who visited China?", "method": "symbolic", "opt": "[1,"}
    page.goto(lab_url + "/?" + urlencode(bad))
    page.wait_for_selector("#notice .error")
    assert "nothing was run" in page.inner_text("#notice")


def test_a_model_being_loaded_is_shown(browser: Any) -> None:
    with slow_minilm() as method, serve_in_thread(create_app(default_method=method)) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(url)
        page.wait_for_function(f"() => document.getElementById('method').value === '{method}'")
        page.fill("#question", "Who visited China?")
        page.click("#ask-button")
        page.wait_for_selector("#running[data-loading*='MiniLM']")
        assert page.inner_text("#running-text").startswith("Loading MiniLM (sentence-transformers)…")
        shoot(page, "loading-model-1400")
        wait_answer(page)
        assert page.inner_text("#answers").startswith("Barack Obama")
        context.close()


def test_timeline_labels_never_overlap_at_50_facts(page: Any, lab_url: str, width: int) -> None:
    open_page(page, lab_url)
    ask(page, "Who visited Japan in 2013?")
    page.click("#more-evidence")
    page.wait_for_function("() => document.getElementById('evidence-cover').textContent.includes('all ')")
    assert int(page.get_attribute("#timeline", "data-points")) >= 50
    measured = page.evaluate(LABEL_OVERLAPS)
    assert measured["labels"] >= 5 and measured["overlaps"] == 0, measured["pairs"]
    (artifacts() / f"label-overlaps-{width}.json").write_text(json.dumps(measured))
    shoot(page, f"timeline-50-facts-{width}")


def test_every_view_is_screenshotted_at_both_widths(page: Any, lab_url: str, width: int) -> None:
    saved = []
    open_page(page, lab_url)
    saved.append(shoot(page, f"view-start-{width}"))
    ask(page, "After Barack Obama, who was the first to visit Cuba?")
    saved.append(shoot(page, f"view-answer-{width}"))
    page.click("#compare-box summary")
    page.fill("#question", "Who visited China in November 2014?")
    page.click("#compare-button")
    page.wait_for_function("() => document.querySelectorAll('#compare-grid button').length >= 1")
    saved.append(shoot(page, f"view-compare-{width}"))
    page.click("#evidence a.entity >> nth=0")
    page.wait_for_selector("#neighbors .pager")
    saved.append(shoot(page, f"view-neighbours-{width}"))
    page.select_option("#op", "get_head_entity")
    page.fill("#q-rel", "Make a visit")
    page.fill("#q-tail", "Cuba")
    page.click("#query-form button[type=submit]")
    page.wait_for_selector("#query-result table")
    saved.append(shoot(page, f"view-explore-{width}"))
    _open_run(page, "a_symbolic")
    page.click("#diff-button")
    page.wait_for_selector("#run-diff table")
    saved.append(shoot(page, f"view-runs-{width}"))
    page.goto(lab_url + "/?" + urlencode({"q": "Who visited China?", "method": "nonexistent_method"}))
    page.wait_for_selector("#notice .error")
    saved.append(shoot(page, f"view-error-{width}"))
    assert all(p.is_file() and p.stat().st_size > 1000 for p in saved)
    assert page.errors.uncaught == []
