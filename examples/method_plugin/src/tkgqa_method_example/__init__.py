"""An example tkgqa method package (``example_timeline``): copy it to add a method of your own.

* ``config.py``: the method's settings (a pydantic model), its ``paper``/``ours`` presets and the settings a
  client of ``tkgqa serve`` may set (marked with ``client_option``).
* ``method.py``: the ``Method`` subclass: ``answer`` (one question), ``describe`` (what ``report.json``
  records) and ``report_metrics`` (aggregates of a run, in ``report.json``'s ``method_metrics``).
* ``pyproject.toml``: the ``tkgqa.methods`` entry point that registers it by name.

Importing this package imports nothing heavy: tkgqa lists the method without importing it, and imports it
when a run or the server first uses it.
"""
