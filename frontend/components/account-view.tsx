"use client";
/** The account page: your profile (and what the prompts say about you), your API keys (a new key's secret shown
 * once, read-only if you like) and your signed-in sessions. */
import { useCallback, useEffect, useState } from "react";
import { accountApi, when, type ApiKey, type KeyCreated, type Profile, type Session } from "@/lib/accounts-api";
import { useAuthStatus } from "./auth-gate";
import { attempt, Failure, PageHeader, ShownOnce } from "./page-header";

function Keys() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [name, setName] = useState("");
  const [readOnly, setReadOnly] = useState(false);
  const [created, setCreated] = useState<KeyCreated | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => attempt(() => accountApi.keys().then(setKeys), setError), []);
  useEffect(() => void load(), [load]);

  const create = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(
      () => accountApi.createKey(name.trim(), readOnly).then(setCreated),
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
        <label className="check">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} /> Read-only
        </label>
        <button type="submit" className="button" disabled={!name.trim()}>
          Create key
        </button>
      </form>
      {created && <ShownOnce label={`Your key “${created.name}”, shown only now:`} text={created.key} />}
      <Failure error={error} />
      <div className="table-wrap">
        <table className="docs-table card-table" aria-label="API keys">
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
                <td data-label="Prefix">
                  <code>{k.prefix}…</code>
                </td>
                <td data-label="Created">{when(k.created_at)}</td>
                <td data-label="Last used">{when(k.last_used_at)}</td>
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
      <Failure error={error} />
      <div className="table-wrap">
        <table className="docs-table card-table" aria-label="Sessions">
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
                <td data-label="Signed in">
                  {when(s.created_at)} {s.current && <span className="badge">this browser</span>}
                </td>
                <td data-label="Last seen">{when(s.last_seen_at)}</td>
                <td data-label="Expires">{when(s.expires_at)}</td>
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

const PROFILE_FIELDS: { key: keyof Profile; label: string; hint: string; max: number }[] = [
  { key: "job_title", label: "Job title", hint: "e.g. Field engineer", max: 100 },
  { key: "team", label: "Team", hint: "e.g. Service", max: 100 },
  { key: "language", label: "Answer language", hint: "e.g. German", max: 50 },
];

/** What the answers' prompt says about you (a short user context). */
function AboutYou() {
  const [profile, setProfile] = useState<Profile>({ job_title: "", team: "", language: "" });
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void attempt(() => accountApi.profile().then(setProfile), setError), []);
  const save = (e: React.FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void attempt(
      () => accountApi.saveProfile(profile).then(setProfile),
      setError,
      () => setSaved(true),
    );
  };
  return (
    <form className="admin-section" aria-labelledby="about-title" onSubmit={save}>
      <h2 id="about-title">About you</h2>
      <p className="hint">Answers are written with this in mind; it never changes what the documents say.</p>
      {PROFILE_FIELDS.map((f) => (
        <label key={f.key} className="auth-field">
          {f.label}
          <input
            placeholder={f.hint}
            maxLength={f.max}
            value={profile[f.key]}
            onChange={(e) => (setSaved(false), setProfile({ ...profile, [f.key]: e.target.value }))}
          />
        </label>
      ))}
      <button type="submit" className="button">
        Save
      </button>
      {saved && <span className="hint"> Saved.</span>}
      <Failure error={error} />
    </form>
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
          <AboutYou />
          <Keys />
          <Sessions />
        </>
      ) : (
        <p className="banner">Accounts are off (RAG_AUTH=off): there is no profile, key or session to manage.</p>
      )}
    </div>
  );
}
