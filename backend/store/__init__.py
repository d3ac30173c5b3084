"""Persistence: the SQLite database Ragline writes threads, turns and checkpoints to."""
