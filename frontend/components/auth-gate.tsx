"use client";
/**
 * Shows its children to whoever may use Ragline: everyone with RAG_AUTH=off, a signed-in user with accounts.
 * Anyone else goes to /sign-in (which also runs the first-run setup).
 */
import { useEffect, useState } from "react";
import { authApi, type AuthStatus } from "@/lib/auth";
import { ApiError } from "@/lib/sse";

export function AuthGate({ children }: { children: React.ReactNode }) {
  const [status, setStatus] = useState<AuthStatus | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    authApi
      .status()
      .then((s) => {
        if (s.mode === "local" && !s.user) window.location.replace("/sign-in");
        else setStatus(s);
      })
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, []);

  if (error)
    return (
      <p className="banner" role="alert">
        {error}
      </p>
    );
  if (!status) return null;
  return <>{children}</>;
}
