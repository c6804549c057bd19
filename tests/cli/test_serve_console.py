"""`tandem serve` as a newcomer meets it after `make run`: the real command in a subprocess, the
README's two curl commands, and what the terminal shows (stdout redirected to a pipe here)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from bot.core.config import ENV_NAMES
from tests.cli.local_http import free_port, post

PHONE = "+14155552671"


def _serve_readme_flow(tmp_path: Path) -> tuple[str, str]:
    """Run `tandem serve` with TANDEM_INSECURE_LOCAL=true and nothing else configured, enroll
    the README's participant, text "hello" as them, wait for the demo's question and stop."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from bot.cli.main import main; main()", "serve"]
            + ["--port", str(port)],
            cwd=tmp_path,
            env={**clean, "TANDEM_INSECURE_LOCAL": "true"},
            stdout=stdout,
            stderr=stderr,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(base + "/health", timeout=5).close()
                    break
                except OSError:
                    assert proc.poll() is None, err.read_text()
                    assert time.monotonic() < deadline, "serve did not answer /health"
                    time.sleep(0.2)
            enroll = {"phone_number": PHONE, "timezone": "America/Toronto"}
            body = json.dumps(enroll).encode()
            assert post(base + "/conversation/participants", body, "application/json") == 201
            form = {"From": PHONE, "To": "+15005550006", "MessageSid": "SM0001", "Body": "hello"}
            inbound = urllib.parse.urlencode(form).encode()
            assert (
                post(
                    base + "/webhooks/twilio/inbound", inbound, "application/x-www-form-urlencoded"
                )
                == 200
            )
            while "Reply with a number" not in out.read_text():
                assert time.monotonic() < deadline, out.read_text()
                time.sleep(0.2)
            time.sleep(1)  # whatever else this turn sends
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    return out.read_text(), err.read_text()


def test_serve_shows_both_directions_one_line_each_and_warns_only_once_what_applies(
    tmp_path: Path,
) -> None:
    stdout, stderr = _serve_readme_flow(tmp_path)

    lines = stdout.splitlines()
    assert lines[0].startswith("Tandem listening on http://127.0.0.1:")
    assert lines[-1] == "stopping…"
    conversation = lines[1:-1]
    # What the participant sent, then what was sent to them: one line per message, nothing else.
    assert f"<-- {PHONE} (sms): hello" in conversation
    assert all(re.fullmatch(rf"(<--|-->) \{PHONE} \(sms\): \S.*", line) for line in conversation)
    question = (
        f"--> {PHONE} (sms): What would you like a tip about? Reply with a number: "
        "/ 1. Sleep / 2. Moving more / 3. Stress"
    )
    # Once, though "hello" may come before the question went out (the worker still starting):
    # the welcome step entered again replaces its ask not yet sent.
    assert conversation.count(question) == 1, conversation
    assert f"--> {PHONE} (sms): Hi there! This is the Tandem demo." in " ".join(conversation)
    assert "\x1b[" not in stdout  # redirected: no colour codes
    # Each warning once, and only those that apply: the demo never calls an LLM.
    assert stderr.count("researcher API runs WITHOUT authentication") == 1
    assert "OPENAI_API_KEY" not in stderr and "no LLM configured" not in stderr
    # A send is its printed line: no INFO lines about it (nor its text or number in the log).
    assert "sent as CONSOLE" not in stderr and "console messenger" not in stderr
    assert PHONE not in stderr and "Hi there" not in stderr
