"""Every CHECK file in this folder (see tests/support/passcheck.py)."""
from pathlib import Path

import pytest

from tests.support.passcheck import check_file

FILES = sorted(Path(__file__).parent.glob("*.irf"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_check_file(path):
    check_file(path)
