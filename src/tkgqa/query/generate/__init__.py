"""Questions generated from a KG with computed gold: MultiTQ-style questions over the typed program
(:mod:`.questions`) and LPKG's structural patterns grounded into instances (:mod:`.patterns`)."""
