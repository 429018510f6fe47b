from __future__ import annotations

from retrieval_helpers import point_fact

from tkgqa.kg import Fact, TemporalKG
from tkgqa.retrieval import Verbalizer, format_time, verbalize_fact, verbalize_facts
from tkgqa.time import TimePoint


def test_point_fact_uses_on_and_spaces() -> None:
    f = point_fact("Barack_Obama", "Make_a_visit", "China", "2014-05-03")
    assert verbalize_fact(f) == "Barack Obama Make a visit China on 2014-05-03"


def test_interval_and_open_ends() -> None:
    f = Fact("Albert_Einstein", "educated_at", "ETH_Zurich", TimePoint(1990), TimePoint(1995))
    assert verbalize_fact(f) == "Albert Einstein educated at ETH Zurich from 1990 to 1995"
    since = Fact("A", "member_of", "B", TimePoint(2001, 3), None)
    until = Fact("A", "member_of", "B", None, TimePoint(2004))
    assert verbalize_fact(since) == "A member of B since 2001-03"
    assert verbalize_fact(until) == "A member of B until 2004"
    assert verbalize_fact(Fact("A", "r", "B")) == "A r B"


def test_labels_come_from_the_store() -> None:
    f = Fact("Q76", "P39", "Q11696", TimePoint(2009, 1, 20), TimePoint(2017, 1, 20))
    kg = TemporalKG([f], labels={"Q76": "Barack Obama", "P39": "position held", "Q11696": "US President"})
    assert verbalize_fact(f, kg) == "Barack Obama position held US President from 2009-01-20 to 2017-01-20"
    assert verbalize_facts([f, f], kg) == [verbalize_fact(f, kg)] * 2


def test_configurable_templates_and_word_dates() -> None:
    v = Verbalizer(point_template="{t}: {s} | {r} | {o}", time_style="words", underscores_to_spaces=False)
    f = point_fact("Barack_Obama", "Make_a_visit", "China", "2014-05-03")
    assert v(f) == "3 May 2014: Barack_Obama | Make_a_visit | China"
    assert Verbalizer(include_time=False)(f) == "Barack Obama Make a visit China"
    assert format_time(TimePoint(2014, 9), "words") == "September 2014"
    assert format_time(TimePoint(2014), "words") == "2014"
