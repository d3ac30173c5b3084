"""parse_sse: split a text/event-stream body into (event, data) pairs for assertions."""

import json


def parse_sse(text: str) -> list[tuple[str, dict]]:
    """Events in order; comment lines (pings) are skipped, multi-line data joined with newlines."""
    events: list[tuple[str, dict]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events
