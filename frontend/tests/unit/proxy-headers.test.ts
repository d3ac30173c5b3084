import { describe, expect, it } from "vitest";
import { forwardHeaders } from "@/lib/proxy-headers";

describe("forwardHeaders", () => {
  it("keeps every Set-Cookie of a response: the SSO callback's session cookie beside the cleared pending one", () => {
    const upstream = new Headers();
    upstream.append("set-cookie", "ragline_session=abc; HttpOnly; Path=/; SameSite=lax");
    upstream.append("set-cookie", 'ragline_sso_pending=""; Max-Age=0; Path=/api/auth/oidc');
    upstream.append("location", "/");
    const passed = forwardHeaders(upstream);
    expect(passed.getSetCookie()).toEqual([
      "ragline_session=abc; HttpOnly; Path=/; SameSite=lax",
      'ragline_sso_pending=""; Max-Age=0; Path=/api/auth/oidc',
    ]);
    expect(passed.get("location")).toBe("/");
  });

  it("drops hop-by-hop headers and keeps the others once", () => {
    const request = new Headers({
      host: "ui.example:3000",
      connection: "keep-alive",
      "content-length": "12",
      "x-ragline-thread-id": "t1",
      cookie: "a=1; b=2",
    });
    const passed = forwardHeaders(request);
    expect([...passed.keys()].sort()).toEqual(["cookie", "x-ragline-thread-id"]);
    expect(passed.get("cookie")).toBe("a=1; b=2");
  });
});
