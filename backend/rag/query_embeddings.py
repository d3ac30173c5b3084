"""QueryEmbedder: query vectors cached by SHA-256 of the normalised query and the embedding model."""

import hashlib
import threading
from collections import OrderedDict
from typing import Any


def cache_key(query: str, model: str) -> str:
    """SHA-256 of the model name and the lower-cased, whitespace-collapsed query."""
    normalised = " ".join(query.lower().split())
    return hashlib.sha256(f"{model}\n{normalised}".encode()).hexdigest()


class QueryEmbedder:
    """Embeds queries through an embedding function, remembering the last `max_entries` vectors."""

    def __init__(self, embed: Any, model: str, max_entries: int = 2048) -> None:
        self._embed, self._model, self._max = embed, model, max_entries
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def many(self, texts: list[str]) -> list[list[float]]:
        """Vectors for several texts: cached ones from the cache, the rest from one call of the embedder."""
        keys = [cache_key(t, self._model) for t in texts]
        with self._lock:
            found = {k: self._cache[k] for k in keys if k in self._cache}
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if todo:
            fresh = {
                cache_key(t, self._model): [float(x) for x in v] for t, v in zip(todo, self._embed(todo), strict=True)
            }
            with self._lock:
                for k, v in fresh.items():
                    self._cache[k] = v
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
            found |= fresh
        return [found[k] for k in keys]

    def __call__(self, query: str) -> list[float]:
        """The query's vector, from the cache when seen before."""
        key = cache_key(query, self._model)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                self.hits += 1
                return self._cache[key]
        vector = [float(x) for x in self._embed([query])[0]]
        with self._lock:
            self.misses += 1
            self._cache[key] = vector
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return vector
