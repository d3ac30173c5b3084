/**
 * Same-origin proxy: /api/* -> BACKEND_URL/api/*, read at request time (not baked in at build).
 * Bodies stream both ways, so uploads are not held in memory and SSE tokens are not buffered;
 * aborting the browser request aborts the upstream one, which cancels the model.
 */
import type { NextRequest } from "next/server";
import { forwardHeaders } from "@/lib/proxy-headers";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

function backendUrl(): string {
  return (process.env.BACKEND_URL || "http://127.0.0.1:8000").replace(/\/+$/, "");
}

async function proxy(req: NextRequest, ctx: { params: Promise<{ path: string[] }> }): Promise<Response> {
  const { path } = await ctx.params;
  const target = `${backendUrl()}/api/${path.map(encodeURIComponent).join("/")}${req.nextUrl.search}`;
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  let upstream: Response;
  try {
    upstream = await fetch(target, {
      method: req.method,
      headers: forwardHeaders(req.headers),
      body: hasBody ? req.body : undefined,
      signal: req.signal,
      redirect: "manual",
      cache: "no-store",
      // Node's fetch needs this to stream a request body (uploads) instead of buffering it.
      ...(hasBody ? { duplex: "half" } : {}),
    } as RequestInit);
  } catch (err) {
    if (req.signal.aborted) return new Response(null, { status: 499 });
    const reason = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    return Response.json(
      { detail: `The Ragline backend at ${backendUrl()} is not reachable (${reason}). Is it running?` },
      { status: 502 },
    );
  }
  const headers = forwardHeaders(upstream.headers);
  if ((upstream.headers.get("content-type") || "").startsWith("text/event-stream")) {
    // no-transform keeps Next's compression from buffering the stream; the others tell any proxy in front.
    headers.set("cache-control", "no-cache, no-transform");
    headers.set("x-accel-buffering", "no");
  }
  return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers });
}

export { proxy as GET, proxy as POST, proxy as PUT, proxy as PATCH, proxy as DELETE };
