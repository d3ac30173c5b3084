/**
 * What an upload batch came to, file by file: from POST /api/documents's 202 (`documents` accepted, `rejected` with
 * each refused file's reason), or from its 4xx when every file was refused, whose one detail joins each file's
 * reason with "; " (backend/api/documents.py). Every reason starts with its file's name.
 */
import type { UploadAccepted } from "./types";

export interface UploadFileResult {
  name: string;
  accepted: boolean;
  /** What follows the name: " contains no text; …", ": .exe is not supported; …", or " accepted". */
  text: string;
}

export interface UploadResult {
  /** accepted: every file; partial: some files; failed: none (or the request itself failed). */
  state: "accepted" | "partial" | "failed";
  summary: string;
  files: UploadFileResult[];
}

/** The reason as read after its file's name: "x.md contains no text" -> " contains no text". */
function after(name: string, reason: string): string {
  return reason.startsWith(name) ? reason.slice(name.length) : `: ${reason}`;
}

function summary(accepted: number, refused: number, unchanged = 0): string {
  const toDo = accepted - unchanged; // the files the table shows going in; the same file again has nothing to do
  const same = unchanged ? `${unchanged} already there, unchanged` : "";
  if (toDo === 0) return [same, refused ? `${refused} refused` : ""].filter(Boolean).join(", ") || "nothing sent";
  const whose =
    refused || unchanged ? `the accepted ${toDo === 1 ? "one's" : "ones'"}` : toDo === 1 ? "its" : "each one's";
  const counts = [`${toDo} accepted`, same, refused ? `${refused} refused` : ""].filter(Boolean).join(", ");
  return `${counts}; the table below shows ${whose} progress`;
}

/** What became of an accepted file (the server's `outcome`), as read after its name. */
const OUTCOME = {
  new: " accepted",
  replaced: " accepted: a new version of the document of that name, which stays searchable until this one is ready",
  unchanged: " is already there, unchanged: nothing to do",
} as const;

/** A batch the server answered 202: some files (at least one) accepted, the others refused. */
export function acceptedResult(body: UploadAccepted): UploadResult {
  const refused = body.rejected ?? [];
  const files = [
    ...body.documents.map((d) => ({ name: d.name, accepted: true, text: OUTCOME[d.outcome ?? "new"] })),
    ...refused.map((r) => ({ name: r.name, accepted: false, text: after(r.name, r.detail) })),
  ];
  // one new file: the summary says it all; a new version or the same file again is said of the file
  const plain = body.documents.length === 1 && !refused.length && (body.documents[0].outcome ?? "new") === "new";
  const only = body.documents.length === 1 && !refused.length ? files[0] : null;
  return {
    state: refused.length ? "partial" : "accepted",
    summary:
      only && !plain
        ? `${only.name}${only.text}`
        : summary(
            body.documents.length,
            refused.length,
            body.documents.filter((d) => d.outcome === "unchanged").length,
          ),
    files,
  };
}

/**
 * A batch the server refused whole: its detail cut into each file's reason where "; " is followed by the name of a
 * file sent; a detail that does not start with one (the request itself refused: no access, unreachable) stays whole.
 */
export function refusedResult(names: string[], detail: string): UploadResult {
  const longestFirst = [...new Set(names)].filter(Boolean).sort((a, b) => b.length - a.length);
  const nameAt = (at: number) => longestFirst.find((n) => detail.startsWith(n, at));
  if (!nameAt(0)) return { state: "failed", summary: detail, files: [] };
  const starts = [0];
  for (let i = detail.indexOf("; "); i >= 0; i = detail.indexOf("; ", i + 2)) if (nameAt(i + 2)) starts.push(i + 2);
  const files = starts.map((start, k) => {
    const name = nameAt(start)!;
    const reason = detail.slice(start, k + 1 < starts.length ? starts[k + 1] - 2 : undefined);
    return { name, accepted: false, text: after(name, reason) };
  });
  return { state: "failed", summary: summary(0, files.length), files };
}
