"""``tkgqa.machine.usable_cpus``: the CPUs a process may run on (its affinity), which the local LLM's threads
and the KG's sort threads are sized by."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tkgqa.machine import usable_cpus


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_a_process_pinned_to_one_cpu_uses_one() -> None:
    cpu = min(os.sched_getaffinity(0))
    pin = f"import os; os.sched_setaffinity(0, [{cpu}])"
    code = f"{pin}; from tkgqa.machine import usable_cpus; print(usable_cpus())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
    assert usable_cpus() == len(os.sched_getaffinity(0)) >= 1


def test_without_affinity_every_cpu_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert usable_cpus() == (os.cpu_count() or 1)
