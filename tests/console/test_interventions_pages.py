"""The interventions pages: the validation state, the graph and the files of each one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

from flask.testing import FlaskClient

from bot.interventions.interpreter.applied import INTERVENTIONS
from tests.console.conftest import PASSWORD, get, sign_in, staff_member


def test_the_list_shows_each_interventions_validation_and_its_page_its_graph_and_files(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("researcher")

    listing = get(client, "/console/interventions").get_data(as_text=True)
    page = get(client, "/console/interventions/demo").get_data(as_text=True)

    assert '/console/interventions/demo">demo</a>' in listing and "valid</span>" in listing
    assert "flowchart TD" in page and "s_welcome" in page
    assert "<code>steps/welcome.md</code>" in page and "<code>intervention.yaml</code>" in page
    assert get(client, "/console/interventions/nope").status_code == 404


def test_a_broken_intervention_shows_its_problems(
    app,
    services,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    shutil.copytree(INTERVENTIONS / "demo", tmp_path / "broken")
    welcome = tmp_path / "broken" / "steps" / "welcome.md"
    welcome.write_text(welcome.read_text().replace("to: tip", "to: nowhere"))
    app.extensions["tandem_console"]["interventions"] = tmp_path
    staff_member(services, "r@example.org", "researcher")
    client = app.test_client()
    sign_in(client, "r@example.org", PASSWORD)

    listing = get(client, "/console/interventions").get_data(as_text=True)
    page = get(client, "/console/interventions/broken").get_data(as_text=True)

    assert re.search(
        r'interventions/broken">broken</a></td>\s*<td><span class="badge open">\d+ problem',
        listing,
    )
    assert "nowhere" in page and 'class="error"' in page
