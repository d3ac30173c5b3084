/**
 * Headers the same-origin proxy (app/api/[...path]/route.ts) passes on, both ways: all but the hop-by-hop ones.
 * Each Set-Cookie stays its own header: an SSO callback sets the session cookie and clears the pending one, and
 * with `set` only the last survived, so the browser never got its session.
 */

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "content-encoding",
  "accept-encoding",
]);

export function forwardHeaders(from: Headers): Headers {
  const headers = new Headers();
  from.forEach((value, key) => {
    if (!HOP_BY_HOP.has(key.toLowerCase())) headers.append(key, value); // Set-Cookie comes once per cookie
  });
  return headers;
}
