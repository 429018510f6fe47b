"""The one typed program and everything that makes or runs it: the program nodes and printer
(:mod:`.nodes`), its executor over any store (:mod:`.executor`), the question parsers for relation-vocabulary
KGs (:mod:`.parser`) and per-question context KGs (:mod:`.contextual`), answer sets with their set and
temporal operations (:mod:`.answer_sets`) and the offline reasoner that ties them together
(:mod:`.reasoner`)."""
