"""The web UI as a research instrument (issue 22), in Chromium at 1400 and 390 px: evidence for every answer
(or counted, with a way to load the rest), links that carry what is on screen and refuse what the server does
not offer, compare with presets and LLM-less methods greyed, the runs browser (gold, outcome badges, filter
state, entity links only on the run's KG, a paired diff), neighbours paged and filtered, the timeline's lanes
with the candidates and reference event of a first/after question, the collapsible program tree. Each test
saves a screenshot of its view under ``$TKGQA_UI_ARTIFACTS``."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from stubs import make_run
from ui_shots import PRESET, shoot

from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.server import serve_in_thread

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"
N_VISITORS = 56
VISITS = "\n".join(
    f"Visitor {i:02d}\tMake a visit\tJapan\t2013-{1 + i % 12:02d}-{1 + i % 27:02d}" for i in range(N_VISITORS)
)


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        return dict(json.loads(res.read()))


@pytest.fixture(scope="module")
def busy_url() -> Iterator[str]:
    """The demo KG plus 56 visits to Japan in 2013 (appends on): a question with more answers than the
    method cites facts by default, and an entity with more facts than a page of neighbours."""
    settings = ServiceSettings(allow_append=True, ephemeral_append=True)
    with serve_in_thread(create_app(settings=settings)) as url:
        assert _post(url + "/api/kg/facts", {"lines": VISITS})["added"] == N_VISITORS
        yield url


@pytest.fixture(scope="module")
def plain_url() -> Iterator[str]:
    """The demo KG on a server without an LLM."""
    with serve_in_thread(create_app()) as url:
        yield url


def _rewrite_run(folder: Path, method: dict[str, Any], flip: bool) -> None:
    report = json.loads((folder / "report.json").read_text())
    report["run_config"] = method
    (folder / "report.json").write_text(json.dumps(report))
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()[:4]]
    for row in rows:
        row["kg"] = "demo"
    if flip:  # run B: question 1 wrong, question 2 right
        rows[0].update(predictions=["Xi Jinping"], strict_hit=False)
        rows[1].update(predictions=["Barack Obama"], strict_hit=True)
    (folder / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows))


@pytest.fixture(scope="module")
def two_runs_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("two_runs")
    make_run(root, "a_symbolic")  # rows without the KG they used
    _rewrite_run(make_run(root, "b_ari_oracle"), {"method": "ari", "policy": "oracle", "llm": None}, True)
    with serve_in_thread(create_app(settings=ServiceSettings(runs_dir=str(root)))) as url:
        yield url


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => document.querySelectorAll('#method option').length > 3")


def ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask-button")
    wait_answer(page)


def wait_answer(page: Any) -> None:
    page.wait_for_selector("#result-body:not(.hidden) #context b")
    page.wait_for_function("() => document.getElementById('running').classList.contains('hidden')")


def url_params(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_every_answer_has_its_evidence_or_is_counted(page: Any, busy_url: str, width: int) -> None:
    open_page(page, busy_url)
    ask(page, "Who visited Japan in 2013?")
    n_answers = page.locator("#answers li.answer").count()
    assert n_answers >= N_VISITORS
    cover = page.inner_text("#evidence-cover")
    assert f"of {n_answers} answers" in cover and "No fact shown for" in cover  # 50 facts by default
    page.click("#more-evidence")
    page.wait_for_function(
        f"() => document.getElementById('evidence-cover').textContent.includes('all {n_answers} answers')"
    )
    facts = page.locator("#evidence tbody tr").count()
    assert facts >= n_answers
    assert page.locator("#answers li[data-facts='no fact']").count() == 0
    # the timeline stays readable at 50+ facts: a few lanes, each tall enough for its label
    lanes = int(page.get_attribute("#timeline", "data-lanes"))
    points = int(page.get_attribute("#timeline", "data-points"))
    height = page.locator("#timeline").bounding_box()["height"]
    assert points >= 50 and 1 <= lanes <= 24 and (height - 70) / lanes >= 24
    assert page.evaluate(OVERFLOW) <= 0
    shoot(page, f"evidence-50-facts-{width}")
    assert page.errors.uncaught == []


def test_header_counts_follow_an_append(page: Any, busy_url: str, width: int) -> None:
    open_page(page, busy_url)
    before = page.inner_text("#kg-info")
    page.fill("#append-lines", f"Width Tester {width}\tMake a visit\tPeru\t2015-05-0{1 + width % 7}")
    page.click("#append-form button[type=submit]")
    page.wait_for_function(f"() => document.getElementById('kg-info').textContent !== {json.dumps(before)}")
    after = page.inner_text("#kg-info")
    count = lambda text: int(text.split(": ")[1].split(" facts")[0].replace(",", ""))  # noqa: E731
    assert count(after) == count(before) + 1


def test_a_link_to_a_method_the_server_does_not_offer_is_an_error(
    page: Any, demo_url: str, width: int
) -> None:
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/ask" in r.url else None)
    for method in ("nonexistent_method", "ari:policy=oracle"):
        page.goto(demo_url + "/?" + urlencode({"q": "Who visited China in November 2014?", "method": method}))
        page.wait_for_selector("#notice .error")
        text = page.inner_text("#notice")
        assert method in text and "nothing was run" in text
        assert page.inner_text("#answers") == ""
        shoot(page, f"link-unknown-method-{method.split(':')[0]}-{width}")
    assert asked == []  # never a silent substitute


def test_links_carry_what_is_on_screen(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    page.fill("#as-of", "2014-12")
    ask(page, "Who visited China in November 2014?")
    assert url_params(page)["as_of"] == "2014-12" and url_params(page)["method"] == "symbolic"
    page.fill("#as-of", "")
    page.click("#compare-box summary")
    page.check(f"#compare-methods input[value='{PRESET}']")
    page.click("#compare-button")
    page.wait_for_function("() => !document.querySelector('#compare-grid .spinner')")
    boxes = page.locator("#compare-grid > div")
    preset = boxes.filter(has_text=PRESET)
    preset.locator("button").click()
    wait_answer(page)
    assert url_params(page)["method"] == PRESET
    assert page.input_value("#method") == PRESET
    assert "as_of" not in url_params(page)


def test_compare_offers_presets_and_greys_methods_needing_an_llm(
    page: Any, plain_url: str, width: int
) -> None:
    open_page(page, plain_url)
    page.click("#compare-box summary")
    ari = page.locator("#compare-methods input[value=ari]")
    assert ari.is_disabled() and not ari.is_checked()
    assert "needs an LLM" in page.inner_text("#compare-methods")
    preset = page.locator(f"#compare-methods input[value='{PRESET}']")
    assert preset.is_enabled() and preset.is_checked()
    assert page.locator("#method option[value=ari]").is_disabled()
    assert not page.locator(f"#method option[value='{PRESET}']").is_disabled()
    page.fill("#question", "Who visited China in November 2014?")
    page.click("#compare-button")
    page.wait_for_function("() => document.querySelectorAll('#compare-grid button').length == 2")
    assert (
        "Barack Obama" in page.inner_text("#compare-grid")
        and page.locator("#compare-grid .error").count() == 0
    )
    page.select_option("#method", "symbolic")
    assert "needs an LLM" not in page.inner_text("#method-desc")
    shoot(page, f"compare-no-llm-{width}")
    assert page.evaluate(OVERFLOW) <= 0


def test_runs_browser_shows_gold_outcomes_and_a_paired_diff(page: Any, two_runs_url: str, width: int) -> None:
    open_page(page, two_runs_url)
    page.wait_for_selector("#runs-list a.entity")
    page.click("#runs-list a.entity >> text=b_ari_oracle")
    page.wait_for_selector("#run-filters button")
    assert "ari (policy=oracle)" in page.inner_text("#run-title")
    page.click("#run-filters button[data-outcome=all]")
    page.wait_for_function("() => document.querySelector('#run-results').textContent.includes('4 questions')")
    on = page.locator("#run-filters button.on")
    assert (
        on.count() == 1
        and on.get_attribute("data-outcome") == "all"
        and on.get_attribute("aria-pressed") == "true"
    )
    rows = page.locator("#run-results tbody tr")
    assert rows.count() == 4
    for i in range(4):
        assert rows.nth(i).locator(".badge.outcome").count() == 1
    assert sorted(page.locator("#run-results .badge.outcome").all_inner_texts()) == [
        "abstained",
        "error",
        "right",
        "wrong",
    ]
    wrong = rows.filter(has=page.locator(".badge.outcome.wrong"))
    wrong.locator("button").click()
    wait_answer(page)
    assert "wrong" in page.inner_text("#notice") and "gold: Barack Obama" in page.inner_text("#notice")
    assert page.locator("#answers.run-wrong").count() == 1
    assert url_params(page)["run"] == "b_ari_oracle"
    # run A's rows do not say which KG they used: its entity links are off, with the reason
    page.click("#runs-list a.entity >> text=a_symbolic")
    page.wait_for_function("() => document.getElementById('run-title').textContent.startsWith('a_symbolic')")
    page.click("#run-filters button[data-outcome=correct]")
    page.wait_for_function("() => document.querySelector('#run-results').textContent.includes('1 correct')")
    page.click("#run-results tbody button")
    wait_answer(page)
    assert page.locator("#evidence a.entity").count() == 0
    disabled = page.locator("#evidence span.entity.disabled").first
    assert "does not record which KG" in disabled.get_attribute("title")
    # the paired diff
    page.select_option("#diff-a", "a_symbolic")
    page.select_option("#diff-b", "b_ari_oracle")
    page.click("#diff-button")
    page.wait_for_selector("#run-diff table")
    summary = page.inner_text("#run-diff .diff-summary")
    assert "only A right: 1" in summary and "only B right: 1" in summary and "McNemar" in summary
    changes = page.locator("#run-diff tbody tr td:last-child").all_inner_texts()
    assert changes[:2] == ["only a right", "only b right"] and len(changes) == 4
    shoot(page, f"runs-diff-{width}")
    assert page.evaluate(OVERFLOW) <= 0 and page.errors.uncaught == []


def test_neighbours_are_paged_and_filtered(page: Any, busy_url: str, width: int) -> None:
    open_page(page, busy_url)
    page.fill("#q-rel", "Make a visit")
    page.fill("#q-tail", "Japan")
    page.select_option("#op", "get_head_entity")
    page.click("#query-form button[type=submit]")
    page.wait_for_selector("#query-result table")
    page.click("#query-result a.entity >> text=Japan")
    page.wait_for_selector("#neighbors .pager")
    first = page.inner_text("#neighbors .pager .count")
    total = int(first.split(" of ")[1].replace(",", ""))
    assert first.startswith("facts 1–30 of") and total > 60
    assert page.locator("#neighbors tbody tr").count() == 30
    page.click("#neighbors .pager button >> text=Later")
    page.wait_for_function(
        "() => document.querySelector('#neighbors .pager .count')?.textContent.startsWith('facts 31–60')"
    )
    page.select_option("#nb-relation", "Make a visit")
    page.wait_for_function(
        "() => document.querySelector('#neighbors .pager .count')?.textContent.startsWith('facts 1–')"
    )
    filtered = int(page.inner_text("#neighbors .pager .count").split(" of ")[1].replace(",", ""))
    assert N_VISITORS <= filtered < total and "matching the filters" in page.inner_text("#neighbors-body")
    assert page.locator("#neighbors .histogram .bar").count() >= 2
    page.fill("#nb-time", "2013")
    page.click("#neighbors .filters button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#nb-time')?.value === '2013'"
        " && !document.querySelector('#neighbors .spinner')"
    )
    assert all(
        d.startswith("2013") for d in page.locator("#neighbors tbody td.date:nth-child(4)").all_inner_texts()
    )
    shoot(page, f"neighbours-{width}")
    assert page.evaluate(OVERFLOW) <= 0


def test_after_first_timeline_draws_candidates_reference_and_winner(
    page: Any, demo_url: str, width: int
) -> None:
    open_page(page, demo_url)
    ask(page, "After Barack Obama, who was the first to visit Cuba?")
    assert page.locator("#answers li.answer").count() >= 1
    legend = page.inner_text("#timeline-legend")
    assert "answer fact" in legend and "reference event" in legend and "candidate not chosen" in legend
    assert "chosen among" in legend
    roles = page.evaluate("() => charts.timeline.getOption().series[0].data.map((d) => d.value[4])")
    assert roles.count("reference") >= 1 and roles.count("answer") >= 1 and roles.count("candidate") >= 1
    labels = page.evaluate("() => charts.timeline.getOption().xAxis[0].axisLabel.formatter.year")
    assert labels == "{yyyy}"
    shoot(page, f"timeline-after-first-{width}")
    ask(page, "Which country did Xi Jinping visit first?")
    roles = page.evaluate("() => charts.timeline.getOption().series[0].data.map((d) => d.value[4])")
    assert roles.count("answer") >= 1 and roles.count("candidate") >= 1
    assert page.evaluate(OVERFLOW) <= 0 and page.errors.uncaught == []


def test_program_tree_hides_steps_that_did_not_run(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    ask(page, "Who hosted a visit from Xi Jinping before Barack Obama did?")
    skipped = page.locator("#program li.skipped")
    if skipped.count():
        assert not skipped.first.is_visible()
        page.click("#toggle-skipped")
        assert skipped.first.is_visible()
        page.click("#toggle-skipped")
    toggle = page.locator("#program button.toggle").first
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.locator("#program > li > ul.hidden").count() == 1
    toggle.click()
    page.click("#program-tools .legend summary")
    assert "either direction" in page.inner_text("#program-tools .legend")
    shoot(page, f"program-tree-{width}")
    assert page.evaluate(OVERFLOW) <= 0


def test_errors_say_how_to_start_the_server(page: Any, plain_url: str, width: int) -> None:
    page.goto(plain_url + "/?" + urlencode({"q": "Who visited China in November 2014?", "method": "ari"}))
    page.wait_for_selector("#notice .error")
    text = page.inner_text("#notice")
    assert "needs an LLM" in text and "tkgqa serve --llm" in text
    server_said = "ARI with policy 'llm' needs an LLM: pass llm='llamacpp:smollm2' (or policy='symbolic')"
    said = page.evaluate("(text) => plainMessage(text)", server_said)
    assert "pass llm=" not in said and "start the server with --llm llamacpp:smollm2" in said
    assert "policy=symbolic" in said
    shoot(page, f"error-no-llm-{width}")


def test_example_questions_are_one_tab_stop(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    page.wait_for_selector("#examples .chip")
    chips = page.locator("#examples .chip")
    assert chips.count() > 5
    assert (
        page.evaluate(
            "() => [...document.querySelectorAll('#examples .chip')].filter((c) => c.tabIndex === 0).length"
        )
        == 1
    )
    chips.first.focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement === document.querySelectorAll('#examples .chip')[1]")
    page.keyboard.press("Tab")  # leaves the list in one step
    assert page.evaluate("() => !document.activeElement.classList.contains('chip')")


def test_a_misspelt_name_gets_a_did_you_mean(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    ask(page, "Who visited Irak in 2014?")
    assert "Did you mean: Iran (for “Irak”)?" in page.inner_text("#notice")
