"""Admins invite people: POST/GET /api/invitations and DELETE /api/invitations/{id} (revoke)."""

import logging

from fastapi import APIRouter, HTTPException, Request

from backend.accounts.store import Invitation
from backend.api.errors import responses
from backend.api.security import AdminDep, accounts_of
from backend.clock import now
from backend.contract.auth import InvitationCreated, InvitationOut, InvitationRequest

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/invitations", tags=["users"])
ACCEPT_PAGE = "/sign-in?invite="


def invitation_out(invitation: Invitation) -> InvitationOut:
    """An invitation with its state now."""
    status = (
        "used"
        if invitation.used_at
        else "revoked"
        if invitation.revoked_at
        else "expired"
        if invitation.expires_at <= now()
        else "open"
    )
    return InvitationOut(
        id=invitation.id,
        email=invitation.email,
        role=invitation.role,
        created_at=invitation.created_at,
        expires_at=invitation.expires_at,
        status=status,
    )


@router.post("", response_model=InvitationCreated, status_code=201, responses=responses(401, 403, 404, 409, 422))
async def invite(body: InvitationRequest, request: Request, admin: AdminDep) -> InvitationCreated:
    """A link that creates one account (with the given e-mail, if any); its token is shown only here. 409 when
    that e-mail already has an account: the invitation could never be used."""
    email = body.email.strip() if body.email else None
    if email and await accounts_of(request).store.user_by_email(email) is not None:
        raise HTTPException(409, f"{email} already has an account; nothing was created (the Users list shows it)")
    invitation, token = await accounts_of(request).invite(admin, email, body.role, body.expires_days)
    log.info(
        "admin %s invited %s as %s (invitation %s)", admin.id, email or "anyone with the link", body.role, invitation.id
    )
    return InvitationCreated(**invitation_out(invitation).model_dump(), token=token, link=ACCEPT_PAGE + token)


@router.get("", response_model=list[InvitationOut], responses=responses(401, 403, 404))
async def list_invitations(request: Request, admin: AdminDep) -> list[InvitationOut]:
    """Every invitation with its state, newest first."""
    return [invitation_out(i) for i in await accounts_of(request).store.invitations()]


@router.delete("/{invitation_id}", status_code=204, responses=responses(401, 403, 404))
async def revoke(invitation_id: str, request: Request, admin: AdminDep) -> None:
    """Revoke an unused invitation: its link stops working."""
    if not await accounts_of(request).store.revoke_invitation(invitation_id, now()):
        raise HTTPException(404, "No open invitation with this id: GET /api/invitations lists them")
    log.info("admin %s revoked invitation %s", admin.id, invitation_id)
