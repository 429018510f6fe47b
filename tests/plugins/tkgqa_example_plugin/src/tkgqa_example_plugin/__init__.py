"""An example tkgqa plugin: everything it adds reaches tkgqa through entry points (see pyproject.toml)."""
