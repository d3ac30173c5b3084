"""The contract shared by every layer and by clients: types, formats and wire payloads.

Nothing here imports the rest of the project, so rag/, memory/, guardrails/, graph/ and api/ can all depend on it.
The frontend's types are generated from the OpenAPI schema (`frontend/lib/api-types.gen.ts`) and its formats
from `text.py` and `citations.py` (`frontend/lib/contract.gen.ts`), both by `python -m backend.contract.typescript`.
"""
