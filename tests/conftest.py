"""Test-session defaults: the local mirror of the inputs (../shared/data) pre-seeds the fetch cache."""

from __future__ import annotations

import os
from pathlib import Path

MIRROR = Path(__file__).resolve().parents[1].parent / "shared" / "data"

if "ANALYSIS_DATA_MIRROR" not in os.environ and MIRROR.is_dir():
    os.environ["ANALYSIS_DATA_MIRROR"] = str(MIRROR)
