"""Two-user fixtures for RAG_AUTH=local: an app on the fake model, an admin and a user, each with its own client."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
from fastapi import FastAPI

from backend.contract.auth import CSRF_HEADER

PASSWORD = "correct horse battery"


@dataclass
class Person:
    """A signed-in client: its cookie jar holds the session, `csrf` goes on writes."""

    client: httpx.AsyncClient
    user: dict
    csrf: str

    def headers(self) -> dict[str, str]:
        return {CSRF_HEADER: self.csrf}


@asynccontextmanager
async def client_of(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60) as c:
        yield c


async def sign_in(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> Person:
    response = await client.post("/api/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    body = response.json()
    return Person(client, body["user"], body["csrf_token"])


async def chat(person: Person, message: str = "Hello", thread_id: str | None = None) -> httpx.Response:
    body = {"message": message, "thread_id": thread_id, "mode": "chat"}
    return await person.client.post("/api/chat/stream", json=body, headers=person.headers())
