"""R3's prompts and the typed parsers of their replies:

* :mod:`.ours` — our formats (``preset=ours``) and the parsers every format shares (verdict, axiom,
  grounded answer);
* :mod:`.paper` — the paper's own formats (Appendix D, ``preset=paper``) and their parsers;
* :mod:`.replies` — what the parsers return (verdict, axiom, cited steps, premise checks);
* :mod:`.baselines` — the prompts of the baselines in R3's tables (CoT0, CoT2, KAPING).
"""
