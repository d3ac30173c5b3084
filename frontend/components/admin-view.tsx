"use client";
/** The admin page (admins only): users, invitations, and (admin-sharing.tsx) groups and collections. */
import { useCallback, useEffect, useState } from "react";
import { adminApi, when, type Invitation, type InvitationCreated, type User } from "@/lib/accounts-api";
import { AdminSharing } from "./admin-sharing";
import { useAuthStatus } from "./auth-gate";
import { attempt, Failure, PageHeader, ShownOnce } from "./page-header";

type Role = User["role"];

function UserRow({ user, self, onDelete }: { user: User; self: boolean; onDelete: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-user={user.email}>
      <td className="doc-name">{user.display_name}</td>
      <td data-label="E-mail">{user.email}</td>
      <td data-label="Role">{user.role}</td>
      <td data-label="Created">{when(user.created_at)}</td>
      <td className="doc-actions">
        {self ? (
          <span className="hint">you</span>
        ) : confirming ? (
          <>
            <button type="button" className="tool-button danger" autoFocus onClick={() => void onDelete()}>
              Delete with their threads and documents
            </button>
            <button type="button" className="tool-button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button
            type="button"
            className="tool-button"
            aria-label={`Delete ${user.email}`}
            onClick={() => setConfirming(true)}
          >
            Delete
          </button>
        )}
      </td>
    </tr>
  );
}

function Users({ me, users, reload }: { me: string; users: User[]; reload: () => Promise<void> }) {
  const [form, setForm] = useState({ email: "", display_name: "", password: "", role: "user" as Role });
  const [error, setError] = useState<string | null>(null);
  const add = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(
      () => adminApi.createUser(form),
      setError,
      () => (setForm({ email: "", display_name: "", password: "", role: "user" }), reload()),
    );
  };
  const field = (name: "email" | "display_name" | "password", label: string, type = "text") => (
    <input
      aria-label={label}
      placeholder={label}
      type={type}
      required={name !== "display_name"}
      value={form[name]}
      onChange={(e) => setForm({ ...form, [name]: e.target.value })}
    />
  );
  return (
    <section className="admin-section" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <form className="inline-form" onSubmit={add} aria-label="Add a user">
        {field("email", "E-mail", "email")}
        {field("display_name", "Name")}
        {field("password", "Password", "password")}
        <RolePicker value={form.role} onChange={(role) => setForm({ ...form, role })} />
        <button type="submit" className="button">
          Add user
        </button>
      </form>
      <Failure error={error} />
      <div className="table-wrap">
        <table className="docs-table card-table" aria-label="Users">
          <thead>
            <tr>
              <th>Name</th>
              <th>E-mail</th>
              <th>Role</th>
              <th>Created</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <UserRow
                key={u.id}
                user={u}
                self={u.id === me}
                onDelete={() => attempt(() => adminApi.deleteUser(u.id), setError, reload)}
              />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function RolePicker({ value, onChange }: { value: Role; onChange: (role: Role) => void }) {
  return (
    <select aria-label="Role" value={value} onChange={(e) => onChange(e.target.value as Role)}>
      <option value="user">user</option>
      <option value="admin">admin</option>
    </select>
  );
}

function Invitations() {
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [form, setForm] = useState({ email: "", role: "user" as Role, days: "7" });
  const [sent, setSent] = useState<InvitationCreated | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => attempt(() => adminApi.invitations().then(setInvitations), setError), []);
  useEffect(() => void load(), [load]);

  const invite = (e: React.FormEvent) => {
    e.preventDefault();
    const body = { email: form.email.trim() || null, role: form.role, expires_days: Number(form.days) };
    const made = (created: InvitationCreated) => {
      setSent(created);
      setForm((f) => ({ ...f, email: "" })); // ready for the next person; the link above is this one's
    };
    void attempt(() => adminApi.invite(body).then(made), setError, load);
  };
  return (
    <section className="admin-section" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <form className="inline-form" onSubmit={invite} aria-label="Invite someone">
        <input
          aria-label="Invited e-mail (optional)"
          placeholder="E-mail (optional)"
          type="email"
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
        />
        <RolePicker value={form.role} onChange={(role) => setForm({ ...form, role })} />
        <label className="collection-picker">
          valid for
          <input
            aria-label="Days valid"
            type="number"
            min={1}
            max={30}
            className="narrow"
            value={form.days}
            onChange={(e) => setForm({ ...form, days: e.target.value })}
          />
          days
        </label>
        <button type="submit" className="button">
          Create invitation
        </button>
      </form>
      {sent && (
        <ShownOnce
          label="Send this link to the person invited; it is shown only now:"
          text={new URL(sent.link, window.location.origin).toString()}
        />
      )}
      <Failure error={error} />
      <div className="table-wrap">
        <table className="docs-table card-table" aria-label="Invitations">
          <thead>
            <tr>
              <th>For</th>
              <th>Role</th>
              <th>Created</th>
              <th>Expires</th>
              <th>Status</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id} data-status={i.status}>
                <td data-label="For">{i.email ?? "anyone with the link"}</td>
                <td data-label="Role">{i.role}</td>
                <td data-label="Created">{when(i.created_at)}</td>
                <td data-label="Expires">{when(i.expires_at)}</td>
                <td data-label="Status">{i.status}</td>
                <td className="doc-actions">
                  {i.status === "open" && (
                    <button
                      type="button"
                      className="tool-button"
                      onClick={() => void attempt(() => adminApi.revokeInvitation(i.id), setError, load)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {invitations.length === 0 && (
              <tr>
                <td colSpan={6} className="empty-row">
                  No invitations yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function AdminView() {
  const me = useAuthStatus()?.user;
  const [users, setUsers] = useState<User[]>([]);
  const [error, setError] = useState<string | null>(null);
  const isAdmin = me?.role === "admin";
  const reload = useCallback(() => attempt(() => adminApi.users().then(setUsers), setError), []);
  useEffect(() => {
    if (isAdmin) void reload();
  }, [isAdmin, reload]);

  return (
    <div className="docs-page">
      <PageHeader title="Admin" />
      {!me || !isAdmin ? (
        <p className="banner" role="alert">
          Only an admin can manage users, invitations, groups and collections.
        </p>
      ) : (
        <>
          <Failure error={error} />
          <Users me={me.id} users={users} reload={reload} />
          <Invitations />
          <AdminSharing users={users} />
        </>
      )}
    </div>
  );
}
