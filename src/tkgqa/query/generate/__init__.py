"""Questions generated from a KG with computed gold: MultiTQ-style questions over the typed program
(:mod:`.questions`), LPKG's structural patterns (:mod:`.patterns`) grounded into instances by the seeded
sampler (:mod:`.grounding`), and the one verbaliser both use (:mod:`.verbalize`)."""
