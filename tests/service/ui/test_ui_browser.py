"""The web UI in a real browser (Chromium through Playwright) at 1400 px and 390 px: ask → answer, evidence
timeline and program; no horizontal overflow; keyboard-only use with @-autocomplete; an LLM failure shown
as an error; cancel and the stale-answer guard; shareable URLs; no console errors."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from ui_shots import shoot

QUESTION = "Who visited China in November 2014?"
OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => document.querySelectorAll('#method option').length > 3")


def wait_answer(page: Any) -> None:
    page.wait_for_selector("#result-body:not(.hidden) #context b")
    page.wait_for_function("() => document.getElementById('running').classList.contains('hidden')")


def test_ask_shows_answer_timeline_and_program_without_overflow(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    wait_answer(page)
    assert page.inner_text("#answers") == "Barack Obama"
    context = page.inner_text("#context")
    assert QUESTION in context and "symbolic" in context and "demo" in context
    assert page.locator("#timeline canvas").count() == 1 and page.locator("#graph canvas").count() == 1
    assert page.locator("#timeline").bounding_box()["height"] >= 140
    assert "Make a visit" in page.inner_text("#evidence") and "1 fact" in page.inner_text("#program")
    assert "no LLM calls" in page.inner_text("#status")
    assert page.evaluate(OVERFLOW) <= 0, f"page wider than the {width} px screen"
    shoot(page, f"answer-{width}")
    # an abstention on a long program keeps the page inside the screen too
    page.fill("#question", "Who hosted a visit from Xi Jinping before Barack Obama did?")
    page.click("#ask-button")
    wait_answer(page)
    assert "No answer" in page.inner_text("#notice") and "Missing: no fact" in page.inner_text("#notice")
    assert page.locator("#program .empty").count() >= 1
    assert page.evaluate(OVERFLOW) <= 0
    assert page.errors.console == [] and page.errors.uncaught == []


def test_keyboard_only_flow(page: Any, demo_url: str, width: int) -> None:
    open_page(page, demo_url)
    for _ in range(6):  # from the top of the page: header links, then the question box
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "question":
            break
    assert page.evaluate("document.activeElement.id") == "question"
    page.keyboard.type("Who visited @chin")
    page.wait_for_selector("#entity-suggest:not(.hidden) li")
    options = page.locator("#entity-suggest li")
    first = options.nth(0).inner_text()
    assert options.nth(0).get_attribute("aria-selected") == "true"
    if options.count() > 1:
        page.keyboard.press("ArrowDown")
        assert options.nth(1).get_attribute("aria-selected") == "true"
        page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")  # inserts the highlighted entity, does not submit
    assert page.is_hidden("#entity-suggest")
    assert page.input_value("#question") == "Who visited " + first.split("\n")[0]
    page.keyboard.type(" in November 2014?")
    page.keyboard.press("Enter")
    wait_answer(page)
    assert page.inner_text("#answers") == "Barack Obama"
    link = page.locator("#evidence a.entity").first
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#neighbors:not(.hidden) .chips a")
    assert page.inner_text("#neighbors-title").startswith("Neighbours of")
    assert page.evaluate(OVERFLOW) <= 0
    shoot(page, f"keyboard-neighbours-{width}")
    assert page.errors.console == [] and page.errors.uncaught == []


def test_an_llm_failure_is_shown_as_an_error(page: Any, openai_url: str, llm_env: Any, width: int) -> None:
    llm_env("fail500")
    open_page(page, openai_url)
    page.select_option("#method", "llm_only")
    assert page.is_enabled("#llm") and page.input_value("#llm") == "openai:gpt-4o-mini"
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    page.wait_for_selector("#notice .error")
    text = page.inner_text("#notice")
    assert "LLM failed" in text and "502" in text and "500" in text
    assert page.locator("#notice .abstained").count() == 0 and page.inner_text("#answers") == ""
    assert QUESTION in page.inner_text("#context")
    assert page.evaluate(OVERFLOW) <= 0
    assert page.errors.uncaught == []
    assert all("502" in m for m in page.errors.console)  # only the browser's note of the 502 response


def test_cost_and_cache_hits_are_shown(page: Any, openai_url: str, llm_env: Any, tmp_path: Any) -> None:
    llm_env("ok")
    open_page(page, openai_url)
    page.select_option("#method", "llm_only")
    page.fill("#question", "Who visited China in 2014?")
    page.click("#ask-button")
    wait_answer(page)
    page.click("#ask-button")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('from cache')")
    status = page.inner_text("#status")
    assert "1 LLM call (1 from cache)" in status and "$0.0000" in status
    assert "not grounded" in page.inner_text("#answers")  # llm_only cites no KG fact


def test_cancel_and_no_stale_answer(page: Any, openai_url: str, llm_env: Any) -> None:
    llm_env("slow")
    open_page(page, openai_url)
    page.select_option("#method", "llm_only")
    page.fill("#question", "Who visited Japan in 2013?")
    page.click("#ask-button")
    page.wait_for_selector("#running:not(.hidden) .spinner")
    page.wait_for_function(
        "() => /Answering .* \\(1 s\\)/.test(document.getElementById('running-text').textContent)"
    )
    page.click("#cancel-button")
    page.wait_for_selector("#notice .error")
    assert "cancelled" in page.inner_text("#notice") and page.is_hidden("#running")
    # a slow question, then a new one: only the new one's answer is shown, even after the slow one returns
    page.fill("#question", "Who visited Cuba in 2016?")
    page.click("#ask-button")
    page.select_option("#method", "symbolic")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    wait_answer(page)
    page.wait_for_timeout(3500)  # the stub's slow reply has arrived meanwhile
    assert QUESTION in page.inner_text("#context") and page.inner_text("#answers") == "Barack Obama"


def test_blank_question_clears_the_previous_answer(page: Any, demo_url: str) -> None:
    open_page(page, demo_url)
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    wait_answer(page)
    page.fill("#question", "   ")
    page.click("#ask-button")
    page.wait_for_selector("#notice .error")
    assert "empty" in page.inner_text("#notice") and page.inner_text("#answers") == ""


def test_url_state_history_and_export(page: Any, demo_url: str) -> None:
    page.goto(demo_url + "/?" + urlencode({"q": QUESTION, "method": "symbolic"}))
    wait_answer(page)
    assert page.inner_text("#answers") == "Barack Obama"
    assert re.search(r"q=Who\+visited", page.url)
    assert QUESTION in page.inner_text("#history")
    with page.expect_download() as info:
        page.click("#export-button")
    exported = info.value.path().read_text(encoding="utf-8")
    assert '"answers"' in exported and QUESTION in exported


def test_compare_runs_methods_side_by_side(page: Any, demo_url: str) -> None:
    open_page(page, demo_url)
    page.fill("#question", QUESTION)
    page.click("#compare-box summary")
    ticked = [b.get_attribute("value") for b in page.locator("#compare-methods input:checked").all()]
    for value in ticked:  # start from none ticked (the server's working presets are ticked by default)
        page.uncheck(f'#compare-methods input[value="{value}"]')
    page.check("#compare-methods input[value=symbolic]")
    page.check("#compare-methods input[value=llm_only]")
    page.click("#compare-button")
    page.wait_for_function("() => document.querySelectorAll('#compare-grid button').length == 2")
    text = page.inner_text("#compare-grid")
    assert "symbolic" in text and "llm_only" in text and "Barack Obama" in text
    assert page.evaluate(OVERFLOW) <= 0


def test_runs_browser_opens_a_result_in_the_answer_view(page: Any, runs_url: str, width: int) -> None:
    open_page(page, runs_url)
    page.wait_for_selector("#runs-list a.entity")
    page.click("#runs-list a.entity")
    page.wait_for_selector("#run-filters button")
    assert "wrong (1)" in page.inner_text("#run-filters")
    page.wait_for_selector("#run-chart", state="visible")  # an <img> has no size until it has loaded
    page.click("#run-filters button[data-outcome=correct]")
    page.wait_for_function("() => document.querySelector('#run-results').textContent.includes('1 correct')")
    page.click("#run-results button")
    wait_answer(page)
    assert page.inner_text("#answers") == "Barack Obama" and "symbolic" in page.inner_text("#context")
    assert "Barack Obama" in page.inner_text("#evidence")
    assert page.evaluate(OVERFLOW) <= 0
    assert page.errors.uncaught == []


def _slow_ari_server(monkeypatch: Any, delay_s: float) -> Any:
    """A server whose default method is ARI (no model download) with FakeLLM picking the first action after
    ``delay_s`` seconds per step."""
    import time

    import tkgqa.testing
    from tkgqa.service import create_app
    from tkgqa.service.server import serve_in_thread

    def reply(request: Any) -> str:
        time.sleep(delay_s)
        return "Action: 1"

    monkeypatch.setattr(tkgqa.testing, "default_responder", reply)
    app = create_app(default_method="ari:embedder=hashing,t_max=4", llm="fake")
    return app, serve_in_thread(app)


def test_steps_are_listed_live_under_the_spinner(page: Any, monkeypatch: Any, isolated_home: Any) -> None:
    _, server = _slow_ari_server(monkeypatch, 0.4)
    with server as url:
        open_page(page, url)
        page.fill("#question", QUESTION)
        page.click("#ask-button")
        page.wait_for_selector("#steps li")
        assert page.is_visible("#running .spinner")  # listed while the method still runs
        first = page.inner_text("#steps li")
        assert "action" in first and "China" in first and "result" in first
        wait_answer(page)
        assert page.is_hidden("#steps") and page.evaluate(OVERFLOW) <= 0
        assert "get_" in page.text_content("#trace")  # the same actions in the answer's trace
    assert not page.errors.console and not page.errors.uncaught


def test_cancel_stops_the_method_between_steps(page: Any, monkeypatch: Any, isolated_home: Any) -> None:
    app, server = _slow_ari_server(monkeypatch, 0.6)
    pool = app.state.tkgqa.pool
    with server as url:
        open_page(page, url)
        page.fill("#question", QUESTION)
        page.click("#ask-button")
        page.wait_for_selector("#steps li")
        page.click("#cancel-button")
        page.wait_for_selector("#notice .error")
        assert "cancelled" in page.inner_text("#notice") and page.is_visible("#steps li")  # how far it got
        for _ in range(100):
            if any(m["cancelled"] for m in pool.stats()["methods"]):
                break
            page.wait_for_timeout(50)
        (slot,) = pool.stats()["methods"]
        assert slot["cancelled"] == 1 and slot["answered"] == 0  # stopped, not answered in the background


def test_examples_come_from_the_servers_benchmark(page: Any) -> None:
    from tkgqa.datasets import load_dataset
    from tkgqa.service import create_app
    from tkgqa.service.server import serve_in_thread

    ds = load_dataset("demo")
    with serve_in_thread(create_app(dataset=ds)) as url:
        open_page(page, url)
        page.wait_for_selector("#examples .chip")
        assert page.inner_text("#examples-title") == "Example questions from demo (one per question type)"
        chips = page.locator("#examples .chip")
        assert chips.count() == len({q.qtype for q in ds.questions})
        chips.first.click()
        wait_answer(page)
        assert page.input_value("#question") in {q.text for q in ds.questions}
    assert not page.errors.console and not page.errors.uncaught
