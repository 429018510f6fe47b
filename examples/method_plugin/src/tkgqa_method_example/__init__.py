"""An example tkgqa method package (``example_timeline``): copy it to add a method of your own.

* ``config.py``: the method's settings (a pydantic model), its ``paper``/``ours`` presets and the settings a
  client of ``tkgqa serve`` may set (marked with ``client_option``).
* ``method.py``: the ``Method`` subclass: ``config_class``, ``answer`` (one question) and ``report_metrics``
  (aggregates of a run, in ``report.json``'s ``method_metrics``); the constructor, option parsing, presets
  and ``describe`` (what ``report.json`` records) come from the base class.
* ``commands.py``: a command group, ``tkgqa example-timeline facts ENTITY``.
* ``plugin.py``: the one descriptor (:class:`tkgqa.methods.package.MethodPackage`) naming all of the above
  as ``"module:attr"`` strings; ``pyproject.toml``'s ``tkgqa.method_packages`` entry point points at it.

Importing this package imports nothing heavy: tkgqa reads the descriptor, lists the method without
importing it, and imports it when a run or the server first uses it.
"""
