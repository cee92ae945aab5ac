"""Settings every test starts from, whatever the shell running pytest has set."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_inherited_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    # NO_COLOR (https://no-color.org) in the caller's environment would turn off the colours that tests of
    # terminal output expect; a test sets it itself when it is what the test is about
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)  # (and FORCE_COLOR, which CI runners often set, the reverse)
    if os.environ.get("TERM") == "dumb":  # (likewise: a CI runner's TERM=dumb turns them off)
        monkeypatch.delenv("TERM")
