"""An example tkgqa method package (``example_timeline``): copy it to add a method of your own.

* ``config.py``: the method's settings (a pydantic model), its ``paper``/``ours`` presets and the settings a
  client of ``tkgqa serve`` may set (marked with ``client_option``).
* ``method.py``: the ``Method`` subclass: ``config_class``, ``answer`` (one question) and ``report_metrics``
  (aggregates of a run, in ``report.json``'s ``method_metrics``); the constructor, option parsing, presets
  and ``describe`` (what ``report.json`` records) come from the base class.
* ``pyproject.toml``: the ``tkgqa.methods`` entry point that registers it by name.

Importing this package imports nothing heavy: tkgqa lists the method without importing it, and imports it
when a run or the server first uses it.
"""
