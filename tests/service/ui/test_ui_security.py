"""Hostile KG labels are text in every view: facts whose names are HTML, script, ``javascript:`` links and
template syntax are appended through ``POST /api/kg/facts`` (server started with appends on), a question
returns them, and every view is opened and its chart tooltips shown; nothing may run (no dialog, the title
and a window flag unchanged, no element made from a label) and the labels must read as the text they are."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from ui_shots import shoot

from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.server import serve_in_thread

IMG = '<img src=x onerror="window.tkgqaPwned=1;document.title=42">'
SCRIPT = "<script>window.tkgqaPwned=2</script>"
JS_LINK = "javascript:window.tkgqaPwned=3"
TEMPLATE = "{{constructor.constructor('window.tkgqaPwned=4')()}}"
ANCHOR = '<a href="javascript:window.tkgqaPwned=5">x</a>'
HOSTILE = (IMG, SCRIPT, JS_LINK, TEMPLATE, ANCHOR)
QUESTION = "Who visited China in November 2014?"
FACT_LINES = "\n".join(f"{name}\tMake a visit\tChina\t2014-11-2{i}" for i, name in enumerate(HOSTILE)) + (
    f"\nBarack Obama\t{SCRIPT}\tChina\t2014-11-20"
)


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        return dict(json.loads(res.read()))


@pytest.fixture(scope="module")
def hostile_url() -> Iterator[str]:
    app = create_app(settings=ServiceSettings(allow_append=True, ephemeral_append=True))  # a fresh demo KG
    with serve_in_thread(app) as url:
        added = _post(url + "/api/kg/facts", {"lines": FACT_LINES})
        assert added["added"] == len(HOSTILE) + 1
        yield url


GUARD = """() => {
  const imgs = [...document.querySelectorAll('img')].filter((i) => (i.getAttribute('src') || '') === 'x');
  const scripts = [...document.querySelectorAll('script')].filter((s) => !s.src);
  const links = [...document.querySelectorAll('a[href]')]
    .filter((a) => /^\\s*javascript:/i.test(a.getAttribute('href')));
  return { pwned: window.tkgqaPwned === undefined ? null : window.tkgqaPwned, title: document.title,
           imgs: imgs.length, scripts: scripts.length, links: links.length };
}"""


def _assert_nothing_ran(page: Any, title: str, dialogs: list[str]) -> None:
    state = page.evaluate(GUARD)
    assert state == {"pwned": None, "title": title, "imgs": 0, "scripts": 0, "links": 0}
    assert dialogs == []


def _show_every_tooltip(page: Any, chart: str) -> list[str]:
    """Show the tooltip of every data item of ``chart`` (and every edge of the graph); their text."""
    texts: list[str] = []
    counts = page.evaluate(
        f"() => {{ const o = charts[{chart!r}].getOption(); "
        "return o.series.map((s) => [(s.data || []).length, (s.links || []).length]); }"
    )
    for series, (n_data, n_links) in enumerate(counts):
        items = [(i, "") for i in range(n_data)] + [(i, ", dataType: 'edge'") for i in range(n_links)]
        for i, kind in items:
            page.evaluate(
                f"() => charts[{chart!r}].dispatchAction({{type: 'showTip', seriesIndex: {series}, "
                f"dataIndex: {i}{kind}}})"
            )
            page.wait_for_timeout(20)
            texts.append(
                page.evaluate(f"() => document.querySelector('#{chart} .chart-tip')?.textContent || ''")
            )
    return texts


def test_hostile_labels_are_text_in_every_view(page: Any, hostile_url: str, width: int) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(hostile_url)
    page.wait_for_function("() => document.querySelectorAll('#method option').length > 3")
    title = page.title()
    page.wait_for_function("() => document.getElementById('kg-info').textContent.includes('facts')")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    page.wait_for_selector("#result-body:not(.hidden) #context b")
    page.wait_for_function("() => document.getElementById('running').classList.contains('hidden')")
    answers = page.inner_text("#answers")
    evidence = page.inner_text("#evidence")
    for label in HOSTILE:  # shown as the text it is, in the answers and the evidence table
        assert label in answers, label
        assert label in evidence, label
    assert SCRIPT in evidence  # a relation label
    _assert_nothing_ran(page, title, dialogs)
    tips = _show_every_tooltip(page, "timeline") + _show_every_tooltip(page, "graph")
    assert any(IMG in t for t in tips) and any(SCRIPT in t for t in tips)
    _assert_nothing_ran(page, title, dialogs)
    page.hover("#timeline canvas")
    page.hover("#graph canvas")
    # program tree, trace, neighbours of a hostile entity, the compare view, history, the explore form
    assert page.locator("#program li").count() >= 1
    page.click("#evidence a.entity >> text=" + "<img")
    page.wait_for_selector("#neighbors:not(.hidden) table")
    assert IMG in page.inner_text("#neighbors")
    page.click("#neighbors a.entity >> text=China")
    page.wait_for_function("() => document.getElementById('neighbors-title').textContent.includes('China')")
    assert TEMPLATE in page.inner_text("#neighbors-body")
    page.click("#compare-box summary")
    page.click("#compare-button")
    page.wait_for_function("() => !document.querySelector('#compare-grid .spinner')")
    page.fill("#q-rel", "Make a visit")
    page.fill("#q-tail", "China")
    page.select_option("#op", "get_head_entity")
    page.click("#query-form button[type=submit]")
    page.wait_for_selector("#query-result table")
    assert JS_LINK in page.inner_text("#query-result")
    page.fill("#question", f"Who visited @{IMG[:6]}")
    page.wait_for_timeout(500)  # the autocomplete list, if any, is built from labels too
    _assert_nothing_ran(page, title, dialogs)
    shoot(page, f"security-hostile-{width}")
    assert page.errors.uncaught == []
