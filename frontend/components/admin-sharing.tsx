"use client";
/** The admin page's groups (create, rename, delete, add and remove members) and collections (create, rename and
 * delete a team or group collection, share a group collection with a group for reading or for reading and
 * writing). */
import { useCallback, useEffect, useState } from "react";
import { adminApi, type Access, type CollectionOut, type Group, type User } from "@/lib/accounts-api";
import { attempt, Failure } from "./page-header";

interface RowProps {
  onError: (message: string | null) => void;
  reload: () => Promise<void>;
}

/** Rename (a small inline form) and Delete (after a confirmation saying what goes with it) of a group or of a team
 * or group collection; a failure (a name taken, a collection still holding documents) goes to `onError`. */
function RenameDelete({
  what,
  name,
  warning,
  rename,
  remove,
  onError,
  reload,
}: RowProps & {
  what: "group" | "collection";
  name: string;
  warning: string;
  rename: (name: string) => Promise<unknown>;
  remove: () => Promise<unknown>;
}) {
  const [mode, setMode] = useState<"view" | "rename" | "confirm">("view");
  const [draft, setDraft] = useState(name);
  const save = (e: React.FormEvent) => {
    e.preventDefault();
    if (draft.trim() === name) return setMode("view");
    void attempt(
      () => rename(draft.trim()),
      onError,
      () => (setMode("view"), reload()),
    );
  };
  if (mode === "rename")
    return (
      <form className="inline-form" aria-label={`Rename ${what} ${name}`} onSubmit={save}>
        <input
          aria-label={`New name for ${name}`}
          required
          autoFocus
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => e.key === "Escape" && setMode("view")}
        />
        <button type="submit" className="tool-button">
          Save
        </button>
        <button type="button" className="tool-button" onClick={() => setMode("view")}>
          Cancel
        </button>
      </form>
    );
  if (mode === "confirm")
    return (
      <span className="inline-form" role="group" aria-label={`Confirm deleting ${what} ${name}`}>
        <span>{warning}</span>
        <button
          type="button"
          className="tool-button danger"
          autoFocus
          onClick={() => void attempt(remove, onError, reload).then(() => setMode("view"))}
        >
          Delete {what}
        </button>
        <button type="button" className="tool-button" onClick={() => setMode("view")}>
          Cancel
        </button>
      </span>
    );
  return (
    <span className="doc-actions">
      <button
        type="button"
        className="tool-button"
        aria-label={`Rename ${what} ${name}`}
        onClick={() => (setDraft(name), setMode("rename"))}
      >
        Rename
      </button>
      <button
        type="button"
        className="tool-button"
        aria-label={`Delete ${what} ${name}`}
        onClick={() => setMode("confirm")}
      >
        Delete
      </button>
    </span>
  );
}

function GroupRow({ group, users, onError, reload }: RowProps & { group: Group; users: User[] }) {
  const [pick, setPick] = useState("");
  const names = new Map(users.map((u) => [u.id, u.display_name || u.email]));
  const others = users.filter((u) => !group.members.includes(u.id));
  const set = (userId: string, member: boolean) =>
    attempt(() => adminApi.setMember(group.id, userId, member), onError, reload);
  return (
    <li className="admin-item" data-group={group.name}>
      <strong>{group.name}</strong>
      <span className="chips">
        {group.members.map((id) => (
          <span key={id} className="chip">
            {names.get(id) ?? id}
            <button
              type="button"
              aria-label={`Remove ${names.get(id) ?? id} from ${group.name}`}
              onClick={() => void set(id, false)}
            >
              ×
            </button>
          </span>
        ))}
        {group.members.length === 0 && <span className="hint">no members</span>}
      </span>
      {others.length > 0 && (
        <span className="inline-form">
          <select aria-label={`Add a member to ${group.name}`} value={pick} onChange={(e) => setPick(e.target.value)}>
            <option value="">Add a member…</option>
            {others.map((u) => (
              <option key={u.id} value={u.id}>
                {u.display_name} ({u.email})
              </option>
            ))}
          </select>
          <button
            type="button"
            className="tool-button"
            disabled={!pick}
            onClick={() => void set(pick, true).then(() => setPick(""))}
          >
            Add
          </button>
        </span>
      )}
      <RenameDelete
        what="group"
        name={group.name}
        warning={`Delete “${group.name}”? Its members leave it, and the collections shared with it stop being shared with its members.`}
        rename={(name) => adminApi.renameGroup(group.id, name)}
        remove={() => adminApi.deleteGroup(group.id)}
        onError={onError}
        reload={reload}
      />
    </li>
  );
}

function CollectionRow({
  collection,
  groups,
  onError,
  reload,
}: RowProps & { collection: CollectionOut; groups: Group[] }) {
  const [group, setGroup] = useState("");
  const [access, setAccess] = useState<Access>("read");
  const groupName = new Map(groups.map((g) => [g.id, g.name]));
  const share = (groupId: string, to: Access | null) =>
    attempt(() => adminApi.share(collection.id, groupId, to), onError, reload);
  return (
    <li className="admin-item" data-collection={collection.name}>
      <strong>{collection.kind === "personal" ? "Personal (yours)" : collection.name}</strong>
      <span className="hint">
        {collection.kind}
        {collection.kind === "team" && (collection.users_write ? ", users may add" : ", only admins add")}
      </span>
      {collection.kind === "group" && (
        <>
          <span className="chips">
            {collection.groups.map((s) => (
              <span key={s.group_id} className="chip">
                {groupName.get(s.group_id) ?? s.group_id}: {s.access === "write" ? "read-write" : "read"}
                <button
                  type="button"
                  aria-label={`Stop sharing with ${groupName.get(s.group_id)}`}
                  onClick={() => void share(s.group_id, null)}
                >
                  ×
                </button>
              </span>
            ))}
            {collection.groups.length === 0 && <span className="hint">shared with no group yet</span>}
          </span>
          <span className="inline-form">
            <select
              aria-label={`Share ${collection.name} with`}
              value={group}
              onChange={(e) => setGroup(e.target.value)}
            >
              <option value="">Share with group…</option>
              {groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
            <select aria-label="Access" value={access} onChange={(e) => setAccess(e.target.value as Access)}>
              <option value="read">read</option>
              <option value="write">read-write</option>
            </select>
            <button type="button" className="tool-button" disabled={!group} onClick={() => void share(group, access)}>
              Share
            </button>
          </span>
        </>
      )}
      {collection.kind !== "personal" && (
        <RenameDelete
          what="collection"
          name={collection.name}
          warning={`Delete “${collection.name}”? Only an empty collection can be deleted: move or delete its documents first.`}
          rename={(name) => adminApi.changeCollection(collection.id, { name })}
          remove={() => adminApi.deleteCollection(collection.id)}
          onError={onError}
          reload={reload}
        />
      )}
    </li>
  );
}

export function AdminSharing({ users }: { users: User[] }) {
  const [groups, setGroups] = useState<Group[]>([]);
  const [collections, setCollections] = useState<CollectionOut[]>([]);
  const [groupName, setGroupName] = useState("");
  const [made, setMade] = useState({ name: "", kind: "team" as CollectionOut["kind"], users_write: false });
  const [error, setError] = useState<string | null>(null);
  const [collectionError, setCollectionError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      attempt(
        () => Promise.all([adminApi.groups().then(setGroups), adminApi.collections().then(setCollections)]),
        setError,
      ),
    [],
  );
  useEffect(() => void load(), [load]);

  const createGroup = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(
      () => adminApi.createGroup(groupName.trim()),
      setError,
      () => (setGroupName(""), load()),
    );
  };
  const createCollection = (e: React.FormEvent) => {
    e.preventDefault();
    const body = {
      name: made.name.trim(),
      kind: made.kind === "group" ? "group" : "team",
      users_write: made.users_write,
    } as const;
    void attempt(
      () => adminApi.createCollection(body),
      setCollectionError,
      () => (setMade({ ...made, name: "" }), load()),
    );
  };
  return (
    <>
      <section className="admin-section" aria-labelledby="groups-title">
        <h2 id="groups-title">Groups</h2>
        <form className="inline-form" onSubmit={createGroup} aria-label="Create a group">
          <input
            aria-label="Group name"
            placeholder="Group name"
            required
            value={groupName}
            onChange={(e) => setGroupName(e.target.value)}
          />
          <button type="submit" className="button">
            Create group
          </button>
        </form>
        <Failure error={error} />
        <ul className="admin-list" aria-label="Groups">
          {groups.map((g) => (
            <GroupRow key={g.id} group={g} users={users} onError={setError} reload={load} />
          ))}
          {groups.length === 0 && <li className="hint">No groups yet.</li>}
        </ul>
      </section>
      <section className="admin-section" aria-labelledby="collections-title">
        <h2 id="collections-title">Collections</h2>
        <form className="inline-form" onSubmit={createCollection} aria-label="Create a collection">
          <input
            aria-label="Collection name"
            placeholder="Collection name"
            required
            value={made.name}
            onChange={(e) => setMade({ ...made, name: e.target.value })}
          />
          <select
            aria-label="Kind"
            value={made.kind}
            onChange={(e) => setMade({ ...made, kind: e.target.value as CollectionOut["kind"] })}
          >
            <option value="team">team: every user reads it</option>
            <option value="group">group: shared with groups</option>
          </select>
          {made.kind === "team" && (
            <label className="collection-picker">
              <input
                type="checkbox"
                checked={made.users_write}
                onChange={(e) => setMade({ ...made, users_write: e.target.checked })}
              />
              users may add documents
            </label>
          )}
          <button type="submit" className="button">
            Create collection
          </button>
        </form>
        <Failure error={collectionError} />
        <ul className="admin-list" aria-label="Collections">
          {collections.map((c) => (
            <CollectionRow key={c.id} collection={c} groups={groups} onError={setCollectionError} reload={load} />
          ))}
        </ul>
      </section>
    </>
  );
}
