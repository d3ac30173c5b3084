"""now(): the one timestamp format used in every store."""

from datetime import UTC, datetime


def now() -> str:
    """UTC timestamp, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
