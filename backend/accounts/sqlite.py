"""The account store's former name, for backend/main.py until it imports SqlAccountStore from backend.accounts.sql."""

from backend.accounts.sql import SqlAccountStore as SqliteAccountStore

__all__ = ["SqliteAccountStore"]
