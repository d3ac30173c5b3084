"""Single sign-on with an OpenID Connect provider, through Authlib's client (authorization code flow with PKCE).

The browser goes to the provider with a fresh state, nonce and PKCE verifier, which wait for its return in a short-
lived HttpOnly cookie scoped to the callback's path (so any replica can finish the sign-in). On return the code is
exchanged at the provider's token endpoint and the ID token's signature (the provider's JWKS), issuer, audience,
expiry and nonce are checked by Authlib. The person is then matched by e-mail: an existing account signs in; an
unknown address gets a user account only when its domain is in RAG_OIDC_ALLOWED_DOMAINS.
"""

import json
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.starlette_client import OAuth

from backend.accounts.service import Accounts
from backend.accounts.store import User
from backend.settings import Settings

log = logging.getLogger(__name__)
PENDING_SECONDS = 600  # a sign-in left at the provider longer than this starts again


class SsoRefused(Exception):
    """The sign-in cannot finish; `status` and a message saying what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Pending:
    """A sign-in waiting at the provider: what its return must match."""

    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str

    def dumps(self) -> str:
        return json.dumps(self.__dict__, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str | None) -> "Pending | None":
        try:
            data = json.loads(text or "")
            return cls(**{k: str(data[k]) for k in ("state", "nonce", "code_verifier", "redirect_uri")})
        except (ValueError, KeyError, TypeError):
            return None


class SsoProvider:
    """The configured provider: where to send a browser, and who came back."""

    def __init__(self, settings: Settings) -> None:
        self.name = settings.oidc_name
        self.allowed_domains = set(settings.oidc_allowed_domains)
        self.redirect_url = settings.oidc_redirect_url
        self.groups_claim = settings.oidc_groups_claim
        self.client: Any = OAuth().register(
            "ragline",
            client_id=settings.oidc_client_id,
            client_secret=settings.oidc_client_secret.get_secret_value(),
            server_metadata_url=settings.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration",
            client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"},
        )

    async def start(self, redirect_uri: str) -> tuple[str, Pending]:
        """The provider's authorization URL and the pending sign-in to keep until the browser returns."""
        try:
            found = await self.client.create_authorization_url(redirect_uri)
        except Exception as exc:  # the provider is down or its discovery document is wrong
            log.warning("SSO: the provider's metadata could not be read: %s", exc)
            raise SsoRefused(502, f"The sign-in provider ({self.name}) cannot be reached; try again later") from exc
        return found["url"], Pending(found["state"], found["nonce"], found["code_verifier"], redirect_uri)

    async def finish(self, pending: Pending | None, params: dict[str, str], accounts: Accounts) -> User:
        """The user the provider vouches for, checked against the pending sign-in; SsoRefused otherwise."""
        if error := params.get("error"):  # nothing is signed in on this path, so it needs no state check first
            log.warning("SSO: the provider refused the sign-in: %s", error)
            raise SsoRefused(401, f"{self.name} did not sign you in ({error[:100]}); start signing in again")
        if pending is None or not secrets.compare_digest(params.get("state", "").encode(), pending.state.encode()):
            log.warning("SSO: a callback without its pending sign-in (state missing or not ours)")
            raise SsoRefused(422, "This sign-in link has expired or was not started here; start signing in again")
        if not params.get("code"):
            raise SsoRefused(422, "The provider sent no authorization code; start signing in again")
        try:
            token = await self.client.fetch_access_token(
                redirect_uri=pending.redirect_uri, code=params["code"], code_verifier=pending.code_verifier
            )
            claims = await self.client.parse_id_token(token, nonce=pending.nonce)
        except (OAuthError, ValueError) as exc:
            log.warning("SSO: the code exchange or the ID token was refused: %s", exc)
            raise SsoRefused(401, f"{self.name} did not confirm this sign-in; start signing in again") from exc
        except Exception as exc:
            log.warning("SSO: the provider could not be reached to finish the sign-in: %s", exc)
            raise SsoRefused(502, f"The sign-in provider ({self.name}) cannot be reached; try again later") from exc
        if claims is None:
            raise SsoRefused(401, f"{self.name} sent no ID token; ask your admin to check the SSO settings")
        return await self.account(claims, accounts)

    async def account(self, claims: dict[str, Any], accounts: Accounts) -> User:
        """The account for the e-mail the provider confirmed (made when its domain is allowed), its group
        memberships set from the groups claim when one is configured."""
        user = await self._account(claims, accounts)
        if self.groups_claim:
            await self.sync_groups(user, claims.get(self.groups_claim), accounts)
        return user

    async def sync_groups(self, user: User, named: Any, accounts: Accounts) -> None:
        """Member of exactly the Ragline groups the claim names (case-insensitive); groups are never created here."""
        names = {str(n).strip().lower() for n in named} if isinstance(named, list) else set()
        if named is not None and not isinstance(named, list):
            log.warning("SSO: claim %s of %s is not a list: no group memberships", self.groups_claim, user.id)
        for group in await accounts.store.groups():
            member = group.name.lower() in names
            if member != (user.id in group.members):
                await accounts.store.set_member(group.id, user.id, member)
                log.info("SSO: user %s %s group %s", user.id, "joins" if member else "leaves", group.name)

    async def _account(self, claims: dict[str, Any], accounts: Accounts) -> User:
        email = str(claims.get("email") or "").strip()
        if not email or claims.get("email_verified") is False:
            log.warning("SSO: refused sub=%s: no verified e-mail in the ID token", claims.get("sub"))
            raise SsoRefused(403, "Your sign-in provider did not confirm an e-mail address; ask your admin")
        if found := await accounts.store.user_by_email(email):
            log.info("SSO: user %s signed in through %s", found[0].id, self.name)
            return found[0]
        if email.rsplit("@", 1)[-1].lower() not in self.allowed_domains:
            log.warning("SSO: refused %s: no account, and the domain is not in RAG_OIDC_ALLOWED_DOMAINS", email)
            raise SsoRefused(403, "There is no Ragline account for this e-mail address; ask an admin for one")
        name = str(claims.get("name") or claims.get("preferred_username") or "")[:100]
        user, made = await accounts.vouched_account(email, name, first_is_admin=True)  # a fresh install's admin
        if made:
            log.info("SSO: account %s made for %s at its first sign-in", user.id, email)
        return user
