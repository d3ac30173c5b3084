import { describe, expect, it } from "vitest";
import { collectionLabel, mayDelete, moveTargets } from "@/lib/collections";
import type { Collection } from "@/lib/types";

const collection = (id: string, kind: Collection["kind"], can_write: boolean, name = id): Collection => ({
  id,
  name,
  kind,
  can_write,
  users_write: false,
  created_at: "2026-01-01T00:00:00Z",
  groups: [],
});

const mine = collection("p1", "personal", true, "Personal");
const team = collection("t1", "team", false, "Handbooks");
const open = collection("t2", "team", true, "Drafts");
const finance = collection("g1", "group", true, "Budgets");
const readOnlyGroup = collection("g2", "group", false, "Board");
const all = [mine, team, open, finance, readOnlyGroup];

describe("moveTargets", () => {
  it("offers every other collection the user may write", () => {
    expect(moveTargets(all, "p1").map((c) => c.id)).toEqual(["t2", "g1"]);
    expect(moveTargets(all, "g1").map((c) => c.id)).toEqual(["p1", "t2"]);
  });

  it("offers none for a document in a collection the user may only read", () => {
    expect(moveTargets(all, "t1")).toEqual([]);
    expect(moveTargets(all, "g2")).toEqual([]);
  });

  it("offers none when the document's collection is unknown, or there are no collections (accounts off)", () => {
    expect(moveTargets(all, "elsewhere")).toEqual([]);
    expect(moveTargets(all, undefined)).toEqual([]);
    expect(moveTargets(null, "p1")).toEqual([]);
  });

  it("offers none when the only writable collection is the document's own", () => {
    expect(moveTargets([mine, team, readOnlyGroup], "p1")).toEqual([]);
  });
});

describe("collectionLabel", () => {
  it("names the personal collection as the user's and the others with their kind", () => {
    expect(collectionLabel(mine)).toBe("Personal (only you)");
    expect(collectionLabel(open)).toBe("Drafts (team)");
    expect(collectionLabel(finance)).toBe("Budgets (group)");
  });
});

describe("mayDelete", () => {
  it("lets the user delete only in a collection they may write, and everything with accounts off", () => {
    expect(mayDelete(all, "p1")).toBe(true);
    expect(mayDelete(all, "g1")).toBe(true);
    expect(mayDelete(all, "t1")).toBe(false);
    expect(mayDelete(all, "g2")).toBe(false);
    expect(mayDelete(all, "elsewhere")).toBe(false);
    expect(mayDelete(null, "")).toBe(true);
    expect(mayDelete(undefined, "p1")).toBe(false); // not known yet (loading, or the request failed)
    expect(moveTargets(undefined, "p1")).toEqual([]);
  });
});
