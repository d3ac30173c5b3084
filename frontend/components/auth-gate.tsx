"use client";
/**
 * Shows its children to whoever may use Ragline: everyone with RAG_AUTH=off, a signed-in user with accounts.
 * Anyone else goes to /sign-in (which also runs the first-run setup). `AccountFoot` shows who is signed in,
 * `AccountLinks` leads to their account page (and admins to the admin page).
 */
import Link from "next/link";
import { createContext, useContext, useEffect, useState } from "react";
import { authApi, type AuthStatus } from "@/lib/auth";
import { ApiError } from "@/lib/sse";

const AuthContext = createContext<AuthStatus | null>(null);

/** How often the status is asked again while it cannot be read (the backend down, say), as the chat's banner does. */
const RECHECK_MS = 5000;

export function AuthGate({ children }: { children: React.ReactNode }) {
  const [status, setStatus] = useState<AuthStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    authApi
      .status()
      .then((s) => {
        if (!live) return;
        setError(null);
        if (s.mode === "local" && !s.user) window.location.replace("/sign-in");
        else setStatus(s);
      })
      .catch((e: unknown) => {
        if (!live) return;
        setError(e instanceof ApiError ? e.message : String(e));
        // asked again until it answers: the page was a dead end that only a reload left (tester)
        timer = setTimeout(() => setAttempt((n) => n + 1), RECHECK_MS);
      });
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [attempt]);

  if (error)
    return (
      <p className="banner" role="alert">
        {error}{" "}
        <button type="button" className="tool-button" onClick={() => setAttempt((n) => n + 1)}>
          Check again
        </button>
      </p>
    );
  if (!status) return null;
  return <AuthContext.Provider value={status}>{children}</AuthContext.Provider>;
}

/** The status the gate loaded: the mode and the signed-in user (null outside an AuthGate). */
export function useAuthStatus(): AuthStatus | null {
  return useContext(AuthContext);
}

/** Links to /account for everyone signed in and to /admin for admins; nothing with RAG_AUTH=off. */
export function AccountLinks() {
  const status = useContext(AuthContext);
  if (!status?.user) return null;
  return (
    <>
      <Link href="/account" className="nav-link">
        Account
      </Link>
      {status.user.role === "admin" && (
        <Link href="/admin" className="nav-link">
          Admin
        </Link>
      )}
    </>
  );
}

/** The signed-in user's name and a sign-out button; nothing with RAG_AUTH=off. */
export function AccountFoot() {
  const status = useContext(AuthContext);
  if (!status?.user) return null;
  const signOut = async () => {
    await authApi.logout().catch(() => undefined); // an ended session signs out all the same
    window.location.replace("/sign-in");
  };
  return (
    <span className="account">
      <span className="account-name" title={status.user.email}>
        {status.user.display_name}
      </span>
      <button type="button" className="tool-button" onClick={() => void signOut()}>
        Sign out
      </button>
    </span>
  );
}
