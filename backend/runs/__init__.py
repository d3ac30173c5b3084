"""Running turns: one at a time per thread, from a clean checkpoint, leaving nothing half-written."""
