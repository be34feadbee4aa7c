"""docs/static.md is one session: it runs as written and prints what it shows."""
from pathlib import Path

from tests.support.sessions import check_python_session

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_static_graph_page_runs_and_prints_what_it_shows(tmp_path):
    check_python_session(DOCS / "static.md", tmp_path)
