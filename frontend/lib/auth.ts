/** Accounts in the UI (RAG_AUTH=local): status, first-run setup, sign-in, joining (invitation or sign-up) and
 * sign-out. */
import type { components } from "./api.gen";
import { csrfHeaders, setCsrfToken } from "./csrf";
import { ApiError, errorDetail } from "./sse";

type Schemas = components["schemas"];
export type AuthStatus = Schemas["AuthStatus"];
export type SignedIn = Schemas["SignedIn"];
export type SetupRequest = Schemas["SetupRequest"];
export type LoginRequest = Schemas["LoginRequest"];
export type AcceptRequest = Schemas["AcceptRequest"];
export type InvitationInfo = Schemas["InvitationInfo"];

async function post<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method: "POST",
    cache: "no-store",
    headers: { "content-type": "application/json", ...csrfHeaders() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new ApiError(await errorDetail(res), res.status);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export const authApi = {
  status: async (): Promise<AuthStatus> => {
    const res = await fetch("/api/auth/status", { cache: "no-store" });
    if (!res.ok) throw new ApiError(await errorDetail(res), res.status);
    const status = (await res.json()) as AuthStatus;
    setCsrfToken(status.csrf_token);
    return status;
  },
  setup: async (body: SetupRequest): Promise<SignedIn> => {
    const signed = await post<SignedIn>("/api/auth/setup", body);
    setCsrfToken(signed.csrf_token);
    return signed;
  },
  login: async (body: LoginRequest): Promise<SignedIn> => {
    const signed = await post<SignedIn>("/api/auth/login", body);
    setCsrfToken(signed.csrf_token);
    return signed;
  },
  invitation: async (token: string): Promise<InvitationInfo> => {
    const res = await fetch(`/api/auth/invitations/${encodeURIComponent(token)}`, { cache: "no-store" });
    if (!res.ok) throw new ApiError(await errorDetail(res), res.status);
    return (await res.json()) as InvitationInfo;
  },
  accept: async (body: AcceptRequest): Promise<SignedIn> => {
    const signed = await post<SignedIn>("/api/auth/accept", body);
    setCsrfToken(signed.csrf_token);
    return signed;
  },
  signup: async (body: SetupRequest): Promise<SignedIn> => {
    const signed = await post<SignedIn>("/api/auth/signup", body);
    setCsrfToken(signed.csrf_token);
    return signed;
  },
  logout: async (): Promise<void> => {
    await post<void>("/api/auth/logout");
    setCsrfToken(null);
  },
};
