import { describe, expect, it } from "vitest";
import {
  activeMention,
  classifyMentions,
  findMentions,
  insertMention,
  LISTED,
  matchDocuments,
  optionMeta,
  mentionCandidates,
  mentionNames,
  mentionToken,
  removeMention,
} from "@/lib/mentions";

const DOCS = ["employee-handbook.md", "it-security-policy.md", "zephyr-9-service-manual.md", "Q3 Report.pdf"];

/** What the autocomplete lists (composer.tsx): the first LISTED matches. */
const listed = <T extends { name: string }>(documents: T[], query: string): T[] =>
  matchDocuments(documents, query).slice(0, LISTED);

describe("findMentions", () => {
  it("reads bare and quoted mentions like the backend", () => {
    expect(mentionNames('@employee-handbook and @"Q3 Report.pdf": what changed?')).toEqual([
      "employee-handbook",
      "Q3 Report.pdf",
    ]);
  });

  it("stops before trailing punctuation", () => {
    expect(mentionNames("see @employee-handbook. Or @it-security-policy?")).toEqual([
      "employee-handbook",
      "it-security-policy",
    ]);
  });

  it("ignores e-mail addresses and double @", () => {
    expect(mentionNames("mail ops@example.com or @@twice")).toEqual([]);
  });

  it("keeps file extensions and offsets", () => {
    expect(findMentions("ask @zephyr-9-service-manual.md now")).toEqual([
      { name: "zephyr-9-service-manual.md", start: 4, end: 31 },
    ]);
  });

  it("dedupes names in order", () => {
    expect(mentionNames("@a @b @a")).toEqual(["a", "b"]);
  });
});

describe("classifyMentions", () => {
  it("resolves exact names, stems, case and containment; flags unknown and ambiguous ones", () => {
    const result = classifyMentions("@Employee-Handbook @zephyr @nosuchdoc @policy @manual.md", DOCS);
    expect(result.known).toEqual([
      { name: "Employee-Handbook", document: "employee-handbook.md" },
      { name: "zephyr", document: "zephyr-9-service-manual.md" },
      { name: "policy", document: "it-security-policy.md" },
      { name: "manual.md", document: "zephyr-9-service-manual.md" },
    ]);
    expect(result.unknown).toEqual(["nosuchdoc"]);
    expect(result.ambiguous).toEqual([]);
    expect(classifyMentions("@md", ["a-md.txt", "b-md.txt"]).ambiguous).toEqual([
      { name: "md", documents: ["a-md.txt", "b-md.txt"] },
    ]);
  });

  it("accepts close misspellings, as the backend's fuzzy match does", () => {
    expect(mentionCandidates("employe-handbok", DOCS)).toEqual(["employee-handbook.md"]);
  });
});

describe("autocomplete", () => {
  it("finds the mention being typed at the caret", () => {
    expect(activeMention("ask @emp", 8)).toEqual({ query: "emp", start: 4 });
    expect(activeMention("@", 1)).toEqual({ query: "", start: 0 });
    expect(activeMention('ask @"Q3 Re', 11)).toEqual({ query: "Q3 Re", start: 4 });
    expect(activeMention("ask @emp now", 12)).toBeNull();
    expect(activeMention("mail me@exa", 11)).toBeNull();
  });

  it("filters documents, prefix matches first", () => {
    expect(
      listed(
        DOCS.map((name) => ({ name })),
        "man",
      ).map((d) => d.name),
    ).toEqual(["zephyr-9-service-manual.md"]);
    expect(
      listed(
        DOCS.map((name) => ({ name })),
        "",
      ).length,
    ).toBe(4);
    expect(listed([{ name: "x-it.md" }, { name: "it.md" }], "it").map((d) => d.name)).toEqual(["it.md", "x-it.md"]);
  });

  it("counts every match, so the list can say how many it leaves out", () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ name: `zephyr-${i}.md` }));
    expect(listed(many, "")).toHaveLength(8);
    expect(matchDocuments(many, "")).toHaveLength(10);
    expect(matchDocuments(many, "ZEPHYR-1")).toHaveLength(1);
    expect(matchDocuments(many, "nothing")).toHaveLength(0);
    // "@resu" listed nothing for "Résumé.md", nor did a query typed decomposed (macOS)
    const accented = [{ name: "Résumé.md" }, { name: "notes.md" }];
    expect(matchDocuments(accented, "resu").map((d) => d.name)).toEqual(["Résumé.md"]);
    expect(matchDocuments(accented, "Re\u0301s").map((d) => d.name)).toEqual(["Résumé.md"]);
  });

  it("writes tokens that parse back to the document", () => {
    expect(mentionToken("employee-handbook.md")).toBe("@employee-handbook");
    expect(mentionToken("Q3 Report.pdf")).toBe('@"Q3 Report.pdf"');
    for (const d of DOCS) {
      const [m] = findMentions(mentionToken(d));
      expect(classifyMentions(`@${m.name}`, DOCS).known[0]?.document ?? d).toBe(d);
    }
  });

  it("replaces the partial mention with the chosen document", () => {
    expect(insertMention("ask @emp", 4, 8, "employee-handbook.md")).toEqual({
      text: "ask @employee-handbook ",
      caret: 23,
    });
    expect(insertMention("@empl what?", 0, 3, "employee-handbook.md")).toEqual({
      text: "@employee-handbook what?",
      caret: 19,
    });
  });

  it("matches names beyond ASCII as the backend does: any case, accents optional, composed or not", () => {
    // the backend resolved these and the box warned "matches no document" (review)
    const docs = ["Résumé équipe.md", "Été.txt", "東京 規則.pdf", "notes.md"];
    expect(classifyMentions("What does @東京 say?", docs).known).toEqual([{ name: "東京", document: "東京 規則.pdf" }]);
    expect(mentionCandidates("Re\u0301sume\u0301 e\u0301quipe.md", docs)).toEqual(["Résumé équipe.md"]);
    expect(mentionCandidates("ÉTÉ.TXT", docs)).toEqual(["Été.txt"]);
    expect(mentionCandidates("resume-equipe", docs)).toEqual(["Résumé équipe.md"]);
  });

  it("removes a mention chip from the text", () => {
    expect(removeMention("@employee-handbook what is the notice period?", "employee-handbook")).toBe(
      "what is the notice period?",
    );
    expect(removeMention("compare @a with @b", "a")).toBe("compare with @b");
  });
});

describe("optionMeta", () => {
  it("says a document's type and how many chunks it has, one chunk in the singular", () => {
    expect(optionMeta({ type: "markdown", chunks: 1 })).toBe("markdown · 1 chunk"); // tester: "1 chunks"
    expect(optionMeta({ type: "pdf", chunks: 3 })).toBe("pdf · 3 chunks");
    expect(optionMeta({ type: "docx", chunks: null })).toBe("docx");
  });
});
