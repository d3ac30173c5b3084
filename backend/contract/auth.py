"""Request and response bodies of accounts: sign-in, first-run setup, users and personal API keys."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.contract.text import NAME_PATTERN, OPTIONAL_NAME_PATTERN

AuthMode = Literal["off", "local"]
EMAIL_PATTERN = r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]+$"  # no control characters
EMAIL = Field(min_length=3, max_length=254, pattern=EMAIL_PATTERN, description="E-mail address (the sign-in name).")
PASSWORD = Field(min_length=8, max_length=1024, description="8 to 1024 characters.")
CSRF_HEADER = "X-CSRF-Token"
SESSION_COOKIE = "ragline_session"
SSO_LOGIN = "/api/auth/oidc/login"
MIN_DAYS = 0.01  # the shortest life of a key or an invitation (about 15 minutes): one of 1e-300 days was born dead


class UserOut(BaseModel):
    """An account as its owner and the admins see it."""

    id: str
    email: str
    display_name: str
    role: Literal["admin", "user"]
    created_at: str


class AuthStatus(BaseModel):
    """Body of GET /api/auth/status: how the server signs people in, and who this request is."""

    mode: AuthMode = Field(description="off: no accounts (one person on this machine); local: accounts.")
    setup_needed: bool = Field(description="true: no account exists yet; POST /api/auth/setup creates the admin.")
    user: UserOut | None = Field(None, description="The signed-in user, if any.")
    csrf_token: str | None = Field(
        None, description=f"Send it as the {CSRF_HEADER} header on writes authenticated by the session cookie."
    )
    signup: bool = Field(False, description="true: people of some e-mail domains may create their own account.")
    sso: str | None = Field(
        None, description=f"Name of the single sign-on provider, when there is one: GET {SSO_LOGIN} signs in there."
    )


class SetupRequest(BaseModel):
    """Body of POST /api/auth/setup: the first account, which becomes the admin."""

    model_config = ConfigDict(extra="forbid", strict=True)

    email: str = EMAIL
    password: str = PASSWORD
    display_name: str = Field(
        "",
        max_length=100,
        pattern=OPTIONAL_NAME_PATTERN,
        description="Name shown in the UI; defaults to the e-mail's name.",
    )


class NewUser(SetupRequest):
    """Body of POST /api/users (admins only)."""

    role: Literal["admin", "user"] = "user"


class LoginRequest(BaseModel):
    """Body of POST /api/auth/login."""

    model_config = ConfigDict(extra="forbid", strict=True)

    email: str = Field(min_length=1, max_length=254)
    password: str = Field(min_length=1, max_length=1024)


class SignedIn(BaseModel):
    """A new session (its token is in the HttpOnly cookie, never in the body)."""

    user: UserOut
    csrf_token: str = Field(description=f"Send it as the {CSRF_HEADER} header on writes with the session cookie.")


class SessionOut(BaseModel):
    """One of your signed-in sessions (GET /api/me/sessions): an opaque id, never its token."""

    id: str = Field(description="Names the session for DELETE /api/me/sessions/{id}; not its token or its hash.")
    created_at: str
    last_seen_at: str
    expires_at: str
    current: bool = Field(description="Whether this request came with this session's cookie.")


class KeyRequest(BaseModel):
    """Body of POST /api/keys."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1, max_length=100, pattern=NAME_PATTERN, description="What the key is for; not blank.")
    read_only: bool = Field(False, description="true: the key may only read (GET requests and POST /api/search).")
    expires_days: float | None = Field(
        None, ge=MIN_DAYS, le=3650, description="Days until it stops working (none: never), 0.01 (15 minutes) or more."
    )


class KeyOut(BaseModel):
    """A personal API key as listed: never its secret."""

    id: str
    name: str
    prefix: str = Field(description="The key's first characters, to recognise it.")
    created_at: str
    last_used_at: str | None
    revoked_at: str | None
    read_only: bool = False
    expires_at: str | None = None


class KeyCreated(KeyOut):
    """Body of POST /api/keys: the new key with its secret, shown this once."""

    key: str = Field(description="Send it as `Authorization: Bearer <key>`; it cannot be shown again.")


class NewGroup(BaseModel):
    """A group to create (admins only); collections are shared with groups."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(
        min_length=1, max_length=80, pattern=NAME_PATTERN, description="unique among groups, whatever its case"
    )


class GroupChange(BaseModel):
    """A group's new name (admins only)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=80, pattern=NAME_PATTERN, description="unique among groups, whatever its case"
    )


class GroupOut(BaseModel):
    """A group with the ids of its members."""

    id: str
    name: str
    members: list[str]
    created_at: str


class InvitationRequest(BaseModel):
    """Body of POST /api/invitations (admins only)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    email: str | None = Field(
        None, min_length=3, max_length=254, pattern=EMAIL_PATTERN, description="Only this address may use it."
    )
    role: Literal["admin", "user"] = "user"
    expires_days: float = Field(
        7.0, ge=MIN_DAYS, le=30, description="Days the link stays valid: 0.01 (15 minutes) to 30."
    )


class InvitationOut(BaseModel):
    """An invitation as admins list it: never its token."""

    id: str
    email: str | None
    role: Literal["admin", "user"]
    created_at: str
    expires_at: str
    status: Literal["open", "used", "expired", "revoked"]


class InvitationCreated(InvitationOut):
    """A new invitation: its token is shown this once."""

    token: str
    link: str = Field(description="Path of the UI page that accepts it: send it to the person invited.")


class InvitationInfo(BaseModel):
    """Body of GET /api/auth/invitations/{token}: what the link creates."""

    email: str | None
    role: Literal["admin", "user"]
    expires_at: str


class AcceptRequest(SetupRequest):
    """Body of POST /api/auth/accept: the invitation's token and the new account."""

    token: str = Field(min_length=1, max_length=200)


class ProfileBody(BaseModel):
    """Body of GET and PUT /api/me/profile: what the prompts' short user context says about you."""

    model_config = ConfigDict(extra="forbid", strict=True)

    job_title: str = Field("", max_length=100, pattern=OPTIONAL_NAME_PATTERN, description="For example Field engineer.")
    team: str = Field("", max_length=100, pattern=OPTIONAL_NAME_PATTERN, description="For example Service.")
    language: str = Field(
        "",
        max_length=50,
        pattern=OPTIONAL_NAME_PATTERN,
        description="Language answers should be written in, e.g. German.",
    )
