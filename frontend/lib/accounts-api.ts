/** Typed calls behind the admin page (users, invitations, groups, collections) and the account page (profile, API
 * keys, sessions), RAG_AUTH=local. */
import { call, json } from "./api";
import type { components } from "./api.gen";

type Schemas = components["schemas"];
export type User = Schemas["UserOut"];
export type NewUser = Schemas["NewUser"];
export type Invitation = Schemas["InvitationOut"];
export type InvitationCreated = Schemas["InvitationCreated"];
export type InvitationRequest = Schemas["InvitationRequest"];
export type Group = Schemas["GroupOut"];
export type CollectionOut = Schemas["CollectionOut"];
export type NewCollection = Schemas["NewCollection"];
export type CollectionChange = Schemas["CollectionChange"];
export type Access = Schemas["ShareRequest"]["access"];
export type ApiKey = Schemas["KeyOut"];
export type KeyCreated = Schemas["KeyCreated"];
export type Session = Schemas["SessionOut"];
export type Profile = Schemas["ProfileBody"];

const id = (value: string) => encodeURIComponent(value);

export const adminApi = {
  users: () => call<User[]>("/api/users"),
  createUser: (body: NewUser) => call<User>("/api/users", { method: "POST", ...json(body) }),
  deleteUser: (userId: string) => call<void>(`/api/users/${id(userId)}`, { method: "DELETE" }),
  invitations: () => call<Invitation[]>("/api/invitations"),
  invite: (body: InvitationRequest) => call<InvitationCreated>("/api/invitations", { method: "POST", ...json(body) }),
  revokeInvitation: (invitationId: string) => call<void>(`/api/invitations/${id(invitationId)}`, { method: "DELETE" }),
  groups: () => call<Group[]>("/api/groups"),
  createGroup: (name: string) => call<Group>("/api/groups", { method: "POST", ...json({ name }) }),
  renameGroup: (groupId: string, name: string) =>
    call<Group>(`/api/groups/${id(groupId)}`, { method: "PATCH", ...json({ name }) }),
  /** Also stops sharing every collection with the group. */
  deleteGroup: (groupId: string) => call<void>(`/api/groups/${id(groupId)}`, { method: "DELETE" }),
  setMember: (groupId: string, userId: string, member: boolean) =>
    call<void>(`/api/groups/${id(groupId)}/members/${id(userId)}`, { method: member ? "PUT" : "DELETE" }),
  collections: () => call<CollectionOut[]>("/api/collections"),
  createCollection: (body: NewCollection) => call<CollectionOut>("/api/collections", { method: "POST", ...json(body) }),
  /** Rename a team or group collection, or let users add to a team one (409 when the name is taken). */
  changeCollection: (collectionId: string, body: CollectionChange) =>
    call<CollectionOut>(`/api/collections/${id(collectionId)}`, { method: "PATCH", ...json(body) }),
  /** Only an empty one: 409 says how many documents it still holds. */
  deleteCollection: (collectionId: string) => call<void>(`/api/collections/${id(collectionId)}`, { method: "DELETE" }),
  share: (collectionId: string, groupId: string, access: Access | null) =>
    call<void>(
      `/api/collections/${id(collectionId)}/groups/${id(groupId)}`,
      access ? { method: "PUT", ...json({ access }) } : { method: "DELETE" },
    ),
};

export const accountApi = {
  me: () => call<User>("/api/me"),
  keys: () => call<ApiKey[]>("/api/keys"),
  createKey: (name: string, readOnly = false) =>
    call<KeyCreated>("/api/keys", { method: "POST", ...json({ name, read_only: readOnly }) }),
  profile: () => call<Profile>("/api/me/profile"),
  saveProfile: (profile: Profile) => call<Profile>("/api/me/profile", { method: "PUT", ...json(profile) }),
  revokeKey: (keyId: string) => call<void>(`/api/keys/${id(keyId)}`, { method: "DELETE" }),
  sessions: () => call<Session[]>("/api/me/sessions"),
  endSession: (sessionId: string) => call<void>(`/api/me/sessions/${id(sessionId)}`, { method: "DELETE" }),
};

/** A server time as the reader's locale shows it; "—" for none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}
