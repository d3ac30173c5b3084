import { describe, expect, it } from "vitest";
import { acceptedResult, refusedResult } from "@/lib/uploads";
import type { UploadAccepted } from "@/lib/types";

const doc = (name: string, outcome: "new" | "replaced" | "unchanged" = "new"): UploadAccepted["documents"][number] => ({
  outcome,
  id: name,
  name,
  type: "markdown",
  pages: null,
  chunks: 0,
  size: 10,
  ingested_at: null,
  status: "queued",
  progress: 0,
  error: null,
  flagged: 0,
  collection: "",
});
const EMPTY = "empty.md contains no text; add some text and upload again";
const BIN =
  "random.bin: .bin is not supported; supported: .pdf, .docx, .md, .markdown, .html, .htm, .txt. Convert it to one of these and upload again.";

describe("acceptedResult", () => {
  it("says of a file whether it replaced the document of that name or was the same file again", () => {
    const replaced = acceptedResult({ documents: [doc("rates.md", "replaced")], rejected: [] });
    expect(replaced.summary).toBe(
      "rates.md accepted: a new version of the document of that name, which stays searchable until this one is ready",
    );
    const same = acceptedResult({ documents: [doc("rates.md", "unchanged")], rejected: [] });
    expect(same.summary).toBe("rates.md is already there, unchanged: nothing to do"); // tester: "1 accepted" for both
    const both = acceptedResult({ documents: [doc("a.md"), doc("b.md", "unchanged")], rejected: [] });
    expect(both.files.map((f) => f.text)).toEqual([" accepted", " is already there, unchanged: nothing to do"]);
  });

  it("lists each refused file with its reason, and the accepted ones, under a summary of both", () => {
    const result = acceptedResult({
      documents: [doc("expense-rules.txt")],
      rejected: [
        { name: "empty.md", status: 422, detail: EMPTY },
        { name: "random.bin", status: 415, detail: BIN },
      ],
    });
    expect(result.state).toBe("partial");
    expect(result.summary).toBe("1 accepted, 2 refused; the table below shows the accepted one's progress");
    expect(result.files).toEqual([
      { name: "expense-rules.txt", accepted: true, text: " accepted" },
      { name: "empty.md", accepted: false, text: " contains no text; add some text and upload again" },
      { name: "random.bin", accepted: false, text: BIN.slice("random.bin".length) },
    ]);
  });

  it("says all were accepted when none was refused", () => {
    const result = acceptedResult({ documents: [doc("a.md"), doc("b.md")], rejected: [] });
    expect(result.state).toBe("accepted");
    expect(result.summary).toBe("2 accepted; the table below shows each one's progress");
  });

  it("counts a file sent again unchanged apart: it has nothing to do (a UI probe: '2 accepted' for one new file)", () => {
    const one = acceptedResult({ documents: [doc("new.md"), doc("rates.md", "unchanged")], rejected: [] });
    expect(one.summary).toBe(
      "1 accepted, 1 already there, unchanged; the table below shows the accepted one's progress",
    );
    const none = acceptedResult({
      documents: [doc("a.md", "unchanged"), doc("b.md", "unchanged")],
      rejected: [{ name: "c.exe", status: 422, detail: "c.exe: .exe is not supported" }],
    });
    expect(none.summary).toBe("2 already there, unchanged, 1 refused");
  });

  it("puts the name before a reason that does not start with it", () => {
    const result = acceptedResult({
      documents: [doc("a.md")],
      rejected: [{ name: "x", status: 422, detail: "the file has no name" }],
    });
    expect(result.files[1]).toEqual({ name: "x", accepted: false, text: ": the file has no name" });
  });
});

describe("refusedResult", () => {
  it("cuts a whole batch's refusal into each file's reason, though reasons hold '; ' themselves", () => {
    // the 4xx detail of a batch with no file accepted (backend/api/documents.py: "; ".join)
    const result = refusedResult(["empty.md", "random.bin"], `${EMPTY}; ${BIN}`);
    expect(result.state).toBe("failed");
    expect(result.summary).toBe("2 refused");
    expect(result.files.map((f) => f.name + f.text)).toEqual([EMPTY, BIN]);
    expect(result.files.every((f) => !f.accepted)).toBe(true);
  });

  it("tells apart names that start alike", () => {
    const a = "notes.md contains no text; add some text and upload again";
    const b = "notes.md.bak: .bak is not supported";
    const result = refusedResult(["notes.md", "notes.md.bak"], `${a}; ${b}`);
    expect(result.files.map((f) => f.name)).toEqual(["notes.md", "notes.md.bak"]);
  });

  it("keeps a refusal of the request itself whole", () => {
    const result = refusedResult(["a.md"], "You may not add documents to this collection");
    expect(result).toEqual({ state: "failed", summary: "You may not add documents to this collection", files: [] });
  });
});
