"""Accounts: users, their sign-in sessions and personal API keys, behind the AccountStore interface."""
