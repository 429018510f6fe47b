"""Question text: tokens and lemmas (:mod:`.words`), the relation lexicon (:mod:`.lexicon`), entity mentions
(:mod:`.mentions`, with the country names and demonyms of :mod:`.countries`), the one question-time reader
(:mod:`.timeref`), the question frame — what is asked, ordinals, temporal references (:mod:`.frame`) — and
the one answer normaliser (:mod:`.normalize`)."""
