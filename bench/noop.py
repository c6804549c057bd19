"""The baseline of bench/webhook.py: a Flask app whose inbound webhook does nothing.

It answers `POST /webhooks/twilio/inbound` with the same empty TwiML Tandem sends and
`GET /health` with 200, and is served the way the Tandem process it stands beside is:
`python bench/noop.py PORT` under `tandem serve`'s own server and GIL switch interval,
`gunicorn bench.noop:app` beside gunicorn.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask, Response  # noqa: E402

from bot.runtime.background import SWITCH_INTERVAL  # noqa: E402
from bot.web.server import embedded_server  # noqa: E402

app = Flask(__name__)


@app.post("/webhooks/twilio/inbound")
def inbound() -> Response:
    return Response('<?xml version="1.0" encoding="UTF-8"?><Response/>', mimetype="text/xml")


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


if __name__ == "__main__":
    sys.setswitchinterval(SWITCH_INTERVAL)  # as `tandem serve`'s web process
    server = embedded_server(app, "127.0.0.1", int(sys.argv[1]))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop.wait()
    server.shutdown()
