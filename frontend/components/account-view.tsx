"use client";
/** The account page: your profile, your API keys (a new key's secret shown once) and your signed-in sessions. */
import { useCallback, useEffect, useState } from "react";
import { accountApi, when, type ApiKey, type KeyCreated, type Session } from "@/lib/accounts-api";
import { useAuthStatus } from "./auth-gate";
import { attempt, PageHeader, ShownOnce } from "./page-header";

function Keys() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<KeyCreated | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => attempt(() => accountApi.keys().then(setKeys), setError), []);
  useEffect(() => void load(), [load]);

  const create = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(
      () => accountApi.createKey(name.trim()).then(setCreated),
      setError,
      () => (setName(""), load()),
    );
  };
  return (
    <section className="admin-section" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p className="hint">
        Send a key as <code>Authorization: Bearer &lt;key&gt;</code>; it acts as you on every route.
      </p>
      <form className="inline-form" onSubmit={create}>
        <input
          aria-label="Key name"
          placeholder="What the key is for"
          value={name}
          required
          maxLength={100}
          onChange={(e) => setName(e.target.value)}
        />
        <button type="submit" className="button" disabled={!name.trim()}>
          Create key
        </button>
      </form>
      {created && <ShownOnce label={`Your key “${created.name}”, shown only now:`} text={created.key} />}
      {error && (
        <p className="auth-error" role="alert">
          {error}
        </p>
      )}
      <div className="table-wrap">
        <table className="docs-table" aria-label="API keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Created</th>
              <th>Last used</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-key={k.name}>
                <td className="doc-name">{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{when(k.created_at)}</td>
                <td>{when(k.last_used_at)}</td>
                <td className="doc-actions">
                  {k.revoked_at ? (
                    <span className="hint">revoked {when(k.revoked_at)}</span>
                  ) : (
                    <button
                      type="button"
                      className="tool-button danger"
                      aria-label={`Revoke ${k.name}`}
                      onClick={() => void attempt(() => accountApi.revokeKey(k.id), setError, load)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {keys.length === 0 && (
              <tr>
                <td colSpan={5} className="empty-row">
                  No API keys yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Sessions() {
  const [sessions, setSessions] = useState<Session[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => attempt(() => accountApi.sessions().then(setSessions), setError), []);
  useEffect(() => void load(), [load]);

  const end = (s: Session) =>
    void attempt(
      () => accountApi.endSession(s.id),
      setError,
      () => (s.current ? window.location.replace("/sign-in") : load()),
    );
  return (
    <section className="admin-section" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      {error && (
        <p className="auth-error" role="alert">
          {error}
        </p>
      )}
      <div className="table-wrap">
        <table className="docs-table" aria-label="Sessions">
          <thead>
            <tr>
              <th>Signed in</th>
              <th>Last seen</th>
              <th>Expires</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id} data-current={s.current || undefined}>
                <td>
                  {when(s.created_at)} {s.current && <span className="badge">this browser</span>}
                </td>
                <td>{when(s.last_seen_at)}</td>
                <td>{when(s.expires_at)}</td>
                <td className="doc-actions">
                  <button type="button" className="tool-button" onClick={() => end(s)}>
                    Sign out
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function AccountView() {
  const user = useAuthStatus()?.user;
  return (
    <div className="docs-page">
      <PageHeader title="Account" />
      {user ? (
        <>
          <section className="admin-section" aria-labelledby="profile-title">
            <h2 id="profile-title">Profile</h2>
            <dl className="profile">
              <dt>E-mail</dt>
              <dd>{user.email}</dd>
              <dt>Name</dt>
              <dd>{user.display_name}</dd>
              <dt>Role</dt>
              <dd>{user.role}</dd>
            </dl>
          </section>
          <Keys />
          <Sessions />
        </>
      ) : (
        <p className="banner">Accounts are off (RAG_AUTH=off): there is no profile, key or session to manage.</p>
      )}
    </div>
  );
}
