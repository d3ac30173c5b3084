/**
 * The session's CSRF token (RAG_AUTH=local): every write sends it with the session cookie. Kept in memory only;
 * GET /api/auth/status hands it back after a reload.
 */
export const CSRF_HEADER = "X-CSRF-Token";
let csrfToken: string | null = null;

/** Remember the session's CSRF token (from sign-in, setup or the status); null forgets it. */
export function setCsrfToken(token: string | null | undefined): void {
  csrfToken = token ?? null;
}

/** The header a write sends with the session cookie; empty when there is no session (RAG_AUTH=off). */
export function csrfHeaders(): Record<string, string> {
  return csrfToken ? { [CSRF_HEADER]: csrfToken } : {};
}
