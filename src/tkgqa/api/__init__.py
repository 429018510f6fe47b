"""The library API, between the methods and evaluation: :func:`~tkgqa.api.ask.ask` (``tkgqa.ask``),
resolving a method spec and opening a KG (:mod:`~tkgqa.api.resolve`), and what an answer shows — its JSON
(:func:`~tkgqa.api.resolve.answer_payload`) and views (:mod:`~tkgqa.api.views`). The CLI, the service and
the MCP server read it; nothing here imports FastAPI."""
