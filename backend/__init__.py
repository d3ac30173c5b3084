"""Ragline: a self-hosted chat server over a team's own documents."""
