"""Alerts: what changed since the last message (`alerts.py`) and the channels that carry it (`channels.py`)."""
