"""Tandem: an event-sourced SMS and WhatsApp conversation engine for behaviour-change research."""
