"""GET and PUT /api/me/profile: what the prompts' short user context says about you."""

from fastapi import APIRouter, Request

from backend.accounts.store import Profile
from backend.api.errors import responses
from backend.api.security import UserDep, accounts_of
from backend.contract.auth import ProfileBody

router = APIRouter(prefix="/api/me", tags=["users"])


@router.get("/profile", response_model=ProfileBody, responses=responses(401, 404))
async def get_profile(request: Request, user: UserDep) -> ProfileBody:
    """Your job title, team and answer language."""
    profile = await accounts_of(request).store.profile(user.id)
    return ProfileBody(job_title=profile.job_title, team=profile.team, language=profile.language)


@router.put("/profile", response_model=ProfileBody, responses=responses(401, 403, 404, 422))
async def put_profile(body: ProfileBody, request: Request, user: UserDep) -> ProfileBody:
    """Replace your profile; the next turn's prompt describes you with it."""
    cleaned = Profile(*(" ".join(v.split()) for v in (body.job_title, body.team, body.language)))
    await accounts_of(request).store.set_profile(user.id, cleaned)
    return ProfileBody(job_title=cleaned.job_title, team=cleaned.team, language=cleaned.language)
