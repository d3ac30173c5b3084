"""LoginLimiter: failed sign-ins counted per (client address, e-mail) over a sliding window, in memory."""

import time
from collections import deque
from collections.abc import Callable

from backend.contract.text import fold_name


class LoginLimiter:
    """After `attempts` failures within `window` seconds, that address and e-mail (whatever its case and composition)
    must wait."""

    def __init__(self, attempts: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.attempts, self.window, self._clock = attempts, window, clock
        self._failures: dict[tuple[str, str], deque[float]] = {}

    def _recent(self, key: tuple[str, str]) -> deque[float]:
        failures = self._failures.get(key, deque())
        cutoff = self._clock() - self.window
        while failures and failures[0] <= cutoff:
            failures.popleft()
        if not failures:
            self._failures.pop(key, None)
        return failures

    def wait_seconds(self, address: str, email: str) -> float:
        """Seconds until another attempt is allowed; 0 when it is allowed now."""
        failures = self._recent((address, fold_name(email)))
        if len(failures) < self.attempts:
            return 0.0
        return max(failures[0] + self.window - self._clock(), 0.0)

    def failed(self, address: str, email: str) -> None:
        """Count a failed attempt."""
        key = (address, fold_name(email))
        self._failures[key] = self._recent(key)
        self._failures[key].append(self._clock())

    def succeeded(self, address: str, email: str) -> None:
        """Forget the failures once the right password is given."""
        self._failures.pop((address, fold_name(email)), None)
