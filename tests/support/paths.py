"""Where the repository and its published samples are, and the region every emulated AWS call uses."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


SAMPLES_DIR = Path(os.environ.get("ODP_SAMPLES_DIR", REPO_ROOT / "tests" / "samples"))


AWS_REGION = "eu-west-1"
