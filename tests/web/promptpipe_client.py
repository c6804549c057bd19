"""A client of PromptPipe's REST API, written from its reference (shared/reference/promptpipe.md
§3), as a study's scripts use it: `requests`, the envelope, PromptPipe's paths and messages.

The one change a script needs to talk to Tandem is the bearer token (`token`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

PARTICIPANTS = "/conversation/participants"


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def ok(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("status") == "ok"

    @property
    def result(self) -> Any:
        return self.body.get("result") if isinstance(self.body, dict) else None

    @property
    def message(self) -> str | None:
        return self.body.get("message") if isinstance(self.body, dict) else None


class PromptPipeClient:
    """The calls of §3.1 and /health, each answering status, JSON body and headers."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base = base_url.rstrip("/")
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: Any = None) -> Answer:
        response = self.session.request(method, self.base + path, json=body, timeout=30)
        try:
            parsed: Any = response.json()
        except ValueError:
            parsed = response.text
        return Answer(response.status_code, parsed, dict(response.headers))

    def enroll(self, phone_number: str, **fields: Any) -> Answer:
        return self.call("POST", PARTICIPANTS, {"phone_number": phone_number, **fields})

    def list(self) -> Answer:
        return self.call("GET", PARTICIPANTS)

    def get(self, participant_id: str) -> Answer:
        return self.call("GET", f"{PARTICIPANTS}/{participant_id}")

    def update(self, participant_id: str, **fields: Any) -> Answer:
        return self.call("PUT", f"{PARTICIPANTS}/{participant_id}", fields)

    def delete(self, participant_id: str) -> Answer:
        return self.call("DELETE", f"{PARTICIPANTS}/{participant_id}")

    def health(self) -> Answer:
        return self.call("GET", "/health")
