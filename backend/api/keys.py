"""POST/GET /api/keys and DELETE /api/keys/{id}: the signed-in user's personal API keys."""

import logging

from fastapi import APIRouter, HTTPException, Request

from backend.accounts.store import ApiKey
from backend.api.errors import responses
from backend.api.security import UserDep, accounts_of
from backend.clock import now
from backend.contract.auth import KeyCreated, KeyOut, KeyRequest
from backend.contract.text import shown

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/keys", tags=["keys"])


def key_out(key: ApiKey) -> KeyOut:
    """A key as listed: never its secret."""
    return KeyOut(
        id=key.id,
        name=key.name,
        prefix=key.prefix,
        created_at=key.created_at,
        last_used_at=key.last_used_at,
        revoked_at=key.revoked_at,
        read_only=key.read_only,
        expires_at=key.expires_at,
    )


@router.post("", response_model=KeyCreated, status_code=201, responses=responses(401, 403, 404, 422))
async def create_key(body: KeyRequest, request: Request, user: UserDep) -> KeyCreated:
    """A new API key acting as you: `Authorization: Bearer <key>` on any route; the secret is shown only now."""
    key, secret = await accounts_of(request).new_key(user, body.name.strip(), body.read_only, body.expires_days)
    log.info("user %s created API key %s (%s…)", user.id, key.id, key.prefix)
    return KeyCreated(**key_out(key).model_dump(), key=secret)


@router.get("", response_model=list[KeyOut], responses=responses(401, 404))
async def list_keys(request: Request, user: UserDep) -> list[KeyOut]:
    """Your API keys, newest first, revoked ones included."""
    return [key_out(k) for k in await accounts_of(request).store.keys(user.id)]


@router.delete("/{key_id}", status_code=204, responses=responses(401, 403, 404))
async def revoke_key(key_id: str, request: Request, user: UserDep) -> None:
    """Revoke one of your API keys: it stops working at once."""
    if not await accounts_of(request).store.revoke_key(user.id, key_id, now()):
        raise HTTPException(404, f"API key {shown(key_id)} does not exist; GET /api/keys lists yours")
    log.info("user %s revoked API key %s", user.id, key_id)
