"use client";
/** /sign-in: the first-run admin setup while no account exists, the e-mail and password sign-in afterwards (and
 * single sign-on when the server has a provider: a plain link, since the browser itself goes to the provider). */
import { useEffect, useState } from "react";
import { authApi, type AuthStatus, type InvitationInfo } from "@/lib/auth";
import { ApiError } from "@/lib/sse";
import { Failure } from "./page-header";

export function SignInView() {
  const [status, setStatus] = useState<AuthStatus | null>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [invite, setInvite] = useState<{ token: string; info: InvitationInfo } | null>(null);
  const [signingUp, setSigningUp] = useState(false);

  useEffect(() => {
    const token = new URLSearchParams(window.location.search).get("invite");
    authApi
      .status()
      .then(async (s) => {
        if (s.mode === "off" || s.user) return window.location.replace("/");
        if (token) {
          const info = await authApi.invitation(token);
          setInvite({ token, info });
          if (info.email) setEmail(info.email);
        }
        setStatus(s);
      })
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, []);

  const setup = status?.setup_needed ?? false;
  const joining = !setup && (invite !== null || signingUp); // a new account: name and a new password

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const account = { email, password, display_name: displayName };
      if (setup) await authApi.setup(account);
      else if (invite) await authApi.accept({ ...account, token: invite.token });
      else if (signingUp) await authApi.signup(account);
      else await authApi.login({ email, password });
      window.location.replace("/");
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  }

  if (!status)
    return error ? (
      <p className="banner" role="alert">
        {error}
      </p>
    ) : null;
  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <h1 id="auth-title">
          {setup ? "Create the admin account" : joining ? "Create your Ragline account" : "Sign in to Ragline"}
        </h1>
        {setup && (
          <p className="auth-note">
            No account exists yet. The first account manages the others; threads made before accounts become its own.
          </p>
        )}
        {invite && (
          <p className="auth-note">
            You were invited{invite.info.role === "admin" ? " as an admin" : ""}. The link works once, until{" "}
            {new Date(invite.info.expires_at).toLocaleString()}.
          </p>
        )}
        <label className="auth-field">
          E-mail
          <input
            type="email"
            autoComplete="username"
            required
            readOnly={Boolean(invite?.info.email)}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        {(setup || joining) && (
          <label className="auth-field">
            Display name
            <input autoComplete="name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
          </label>
        )}
        <label className="auth-field">
          Password
          <input
            type="password"
            autoComplete={setup || joining ? "new-password" : "current-password"}
            required
            minLength={setup || joining ? 8 : 1}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <Failure error={error} />
        <button className="button" type="submit" disabled={busy}>
          {setup || joining ? "Create account and sign in" : "Sign in"}
        </button>
        {status.signup && !setup && !invite && (
          <button className="button button-secondary" type="button" onClick={() => setSigningUp(!signingUp)}>
            {signingUp ? "I have an account: sign in" : "New here? Create an account"}
          </button>
        )}
        {status.sso && !setup && !joining && (
          <a className="button button-secondary" href="/api/auth/oidc/login">
            Sign in with {status.sso}
          </a>
        )}
      </form>
    </main>
  );
}
