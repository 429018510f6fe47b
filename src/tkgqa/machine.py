"""What this machine lends tkgqa: the CPUs this process may run on."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """How many CPUs this process may run on: its CPU affinity where the system has one (a container's or
    ``taskset``'s share of the machine; a test worker pinned to its own core), else every CPU, at least 1.
    Thread pools sized by it never put more busy threads on a core than it has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this platform (macOS, Windows)
        return os.cpu_count() or 1
