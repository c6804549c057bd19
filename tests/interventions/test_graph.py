"""The Mermaid graph shows steps, numbered labelled transitions, judgements, digressions,
interrupts and the session start."""

from __future__ import annotations

from bot.interventions.graph import mermaid
from bot.interventions.loader import load_intervention
from tests.interventions.variants import GOOD


def test_the_graph_of_the_fixture() -> None:
    text = mermaid(load_intervention(GOOD))

    assert text.startswith("%% Fixture coach (version 1)\nflowchart TD\n")
    assert '  s_welcome["Welcome"]:::root' in text
    assert '  s_clarify(["Clarify"]):::digression' in text
    assert '  s_risk_check{{"Risk check"}}:::interrupt' in text
    assert "  start((start)) --> s_welcome" in text
    assert (
        '  s_welcome -->|"(1) judgements.ready.answer == #quot;yes#quot; [set]"| s_explore'
    ) in text
    assert (
        '  s_welcome -->|"(2) judgements.ready.answer == #quot;no#quot; — or after 3 turns"| '
        in (text)
    )
    assert '  anywhere ==>|"judgements.risk.level == #quot;high#quot;"| s_risk_check' in text
    assert '  anywhere ==>|"silent for 48 h"| s_recap' in text
    assert (
        '  s_risk_check -.->|"judgements.risk.level == #quot;none#quot; — or after 3 turns"| back'
        in text
    )
    assert '  s_explore -.-|"each turn"| j_engaged' in text
    assert '  anywhere -.-|"each turn"| j_risk' in text
