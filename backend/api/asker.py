"""Who asks a turn: the documents they may read, and the short user context the prompts give about them (their
profile, and what the request adds, screened like a message so it cannot smuggle in instructions)."""

from fastapi import HTTPException

from backend.accounts.store import Profile, User
from backend.api.collections import readable_documents
from backend.api.deps import Services
from backend.api.security import Principal
from backend.guardrails import score_injection
from backend.runs.spec import Asker


def describe(user: User | None, profile: Profile, extra: str = "") -> str:
    """One or two short lines about the asker; "" when there is nothing to say."""
    lines = []
    if user is not None:
        about = ", ".join(p for p in (profile.job_title, profile.team and f"{profile.team} team") if p)
        lines.append(f"Asked by {user.display_name}" + (f" ({about})." if about else "."))
    if profile.language:
        lines.append(f"Answer in {profile.language}.")
    if extra := " ".join(extra.split()):
        lines.append(f"They add: {extra}")
    return " ".join(lines)


async def asker_of(services: Services, principal: Principal, extra: str = "") -> Asker:
    """The turn's Asker; 422 when the request's note reads as instructions to the model."""
    if extra.strip() and score_injection(extra).flagged:
        raise HTTPException(422, "user_context reads as instructions to the assistant: describe yourself instead")
    user = principal.user
    profile = await services.accounts.store.profile(user.id) if user is not None else Profile()
    return Asker(await readable_documents(services, principal), describe(user, profile, extra))
