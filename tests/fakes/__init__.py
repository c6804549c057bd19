"""Local fake HTTP servers for Twilio and OpenAI-compatible APIs, driven by the real SDKs."""
