"""Opaque secrets: session tokens and API keys are random, sent once, and stored only as their SHA-256."""

import hashlib
import hmac
import secrets

KEY_PREFIX = "rl_"
KEY_PREFIX_SHOWN = 10  # "rl_" and 7 characters: enough to tell one's keys apart, far too few to guess the rest


def new_secret() -> str:
    """A random secret of 256 bits, URL-safe."""
    return secrets.token_urlsafe(32)


def new_api_key() -> tuple[str, str]:
    """A new API key and the prefix shown in lists."""
    key = KEY_PREFIX + new_secret()
    return key, key[:KEY_PREFIX_SHOWN]


def digest(secret: str) -> str:
    """What the store keeps of a session token or API key."""
    return hashlib.sha256(secret.encode()).hexdigest()


def csrf_token(session_token: str) -> str:
    """The CSRF token of a session: derived from its secret, so the server keeps nothing more (a cross-site page can
    neither read the HttpOnly cookie nor compute this)."""
    return hmac.new(session_token.encode(), b"ragline-csrf", hashlib.sha256).hexdigest()


def same(given: str, expected: str) -> bool:
    """Constant-time comparison of two tokens."""
    return hmac.compare_digest(given.encode(), expected.encode())
