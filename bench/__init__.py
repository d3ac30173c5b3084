"""Ragline's benchmarks: `python -m bench` lists them, `python -m bench.<name> --help` runs one (see README)."""
