"""Keyword search on Postgres: BM25 computed in SQL over full-text search, as SQLite's FTS5 ranks it.

There is no BM25 in this Postgres: pgserver's build ships pgvector only (no pg_search / pg_textsearch), and the
built-in ts_rank / ts_rank_cd weigh every term alike (no inverse document frequency). Measured with the index's
keyword search alone on Vaswani (3,000 documents, 93 queries, top 20 chunks to documents), nDCG@10 was: ts_rank_cd
0.348, ts_rank_cd normalised by length 0.421, ts_rank 0.497, ts_rank normalised 0.524, FTS5's BM25 0.592, and this
0.597. So the score here is BM25 with FTS5's constants (k1 1.2, b 0.75, idf floored at 1e-6): the generated
`tsvector` (english configuration, which stems like FTS5's porter tokenizer) and its GIN index find the chunks
with any query word; each query lexeme's document frequency is counted through the same index; a chunk's length
is its number of distinct lexemes. Only each lexeme's PER_TERM chunks with the most of it (ts_rank) are scored, so
a search costs about the same on 10,000 chunks as on 100,000 however common its words are. The chunk count and
mean length are re-read at most every STATS_SECONDS.
"""

import threading
import time

from backend.store.database import Database

K1, B = 1.2, 0.75
STATS_SECONDS = 30.0  # how stale the corpus size and mean chunk length may be (both move slowly)

PER_TERM = 200  # candidates per query lexeme, its chunks with the most of it: BM25 ranks only these

# {columns}: the chunk columns to return; {scope}: an optional "AND c.doc_id IN (…)". Parameters in order: the
# query's words (to lexemes), the chunk count, the document ids, the mean chunk length, the limit.
SEARCH = f"""
WITH counted AS MATERIALIZED (  -- each query lexeme's document frequency, counted once
    SELECT lexeme, quote_literal(lexeme)::tsquery AS q,
        (SELECT count(*) FROM chunks WHERE tsv @@ quote_literal(lexeme)::tsquery) AS df
    FROM unnest(tsvector_to_array(to_tsvector('english', ?))) AS lexeme
), terms AS MATERIALIZED (
    -- the chunk count may be up to STATS_SECONDS old while another replica added chunks (df > count): floor the
    -- ratio too, not only the logarithm, which Postgres refuses for a number below zero
    SELECT lexeme, q, GREATEST(ln(GREATEST((?::float8 - df + 0.5) / (df + 0.5), 1e-6)), 1e-6) AS idf FROM counted
), candidates AS MATERIALIZED (  -- so the cost stays bounded however common a word is
    SELECT DISTINCT x.rowid FROM terms t CROSS JOIN LATERAL (
        SELECT c.rowid FROM chunks c WHERE c.tsv @@ t.q {{scope}}
        ORDER BY ts_rank(c.tsv, t.q, 1) DESC LIMIT {PER_TERM}
    ) x
)
SELECT {{columns}}, s.score
FROM candidates k JOIN chunks c ON c.rowid = k.rowid JOIN documents d ON d.id = c.doc_id AND d.version = c.version
CROSS JOIN LATERAL (
    SELECT sum(t.idf * u.tf * {K1 + 1} / (u.tf + {K1} * ({1 - B} + {B} * length(c.tsv) / ?::float8))) AS score
    FROM (SELECT lexeme, array_length(positions, 1)::float8 AS tf FROM unnest(c.tsv)) u JOIN terms t USING (lexeme)
) s
ORDER BY s.score DESC, c.doc_id, c.idx
LIMIT ?
"""


class CorpusStats:
    """The chunk count and mean chunk length (distinct lexemes) BM25 needs, re-read at most every STATS_SECONDS."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._value = (0, 1.0)

    def get(self) -> tuple[int, float]:
        """(chunks, mean length), at most STATS_SECONDS old, or fresh after `stale`."""
        with self._lock:
            if time.monotonic() - self._read_at > STATS_SECONDS:
                with self.db.connection() as conn:
                    n, mean = conn.execute("SELECT count(*), avg(length(tsv)) FROM chunks").fetchone()
                self._value, self._read_at = (int(n), float(mean or 1.0)), time.monotonic()
            return self._value

    def stale(self) -> None:
        """Chunks were written here: read the figures again next time."""
        with self._lock:
            self._read_at = float("-inf")
