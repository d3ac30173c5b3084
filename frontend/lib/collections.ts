/** Collections as the documents page offers them (accounts on): how a picker names one, and where a document may
 * be moved to. */
import type { Collection } from "./types";

/** A collection as the upload and move pickers name it. */
export function collectionLabel(collection: Pick<Collection, "name" | "kind">): string {
  return collection.kind === "personal" ? "Personal (only you)" : `${collection.name} (${collection.kind})`;
}

/**
 * The collections a document filed in `from` may be moved to: every other one the user may write; none when they
 * may not write `from` (or do not see it), or when there are no collections (accounts off).
 */
export function moveTargets(
  collections: readonly Collection[] | null | undefined,
  from: string | null | undefined,
): Collection[] {
  const source = collections?.find((c) => c.id === from);
  if (!collections || !source?.can_write) return [];
  return collections.filter((c) => c.can_write && c.id !== source.id);
}

/** Whether the user may delete a document filed in `from`: always with accounts off (null: no collections), never
 * while the collections are not known (undefined), else only when they may write its collection (the server refuses
 * the others with a 403). */
export function mayDelete(
  collections: readonly Collection[] | null | undefined,
  from: string | null | undefined,
): boolean {
  return collections === null || (collections ?? []).some((c) => c.id === from && c.can_write);
}
