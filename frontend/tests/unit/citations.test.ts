import { renderToStaticMarkup } from "react-dom/server";
import { createElement } from "react";
import { describe, expect, it } from "vitest";
import { MarkdownAnswer } from "@/components/markdown-answer";
import { citedIds, orderSources, splitCitations } from "@/lib/citations";
import type { Source } from "@/lib/types";

const source = (id: string, document = "employee-handbook.md"): Source => ({
  id,
  document,
  page: null,
  chunk: 1,
  snippet: `snippet of ${id}`,
  score: 0.8,
});

describe("splitCitations", () => {
  it("splits text around markers", () => {
    expect(splitCitations("Two months [S1]. Six months [S2].")).toEqual([
      { type: "text", value: "Two months " },
      { type: "cite", id: "S1" },
      { type: "text", value: ". Six months " },
      { type: "cite", id: "S2" },
      { type: "text", value: "." },
    ]);
  });

  it("expands groups and adjacent markers", () => {
    expect(splitCitations("x [S1, S3][S2; S4]")).toEqual([
      { type: "text", value: "x " },
      { type: "cite", id: "S1" },
      { type: "cite", id: "S3" },
      { type: "cite", id: "S2" },
      { type: "cite", id: "S4" },
    ]);
  });

  it("leaves look-alikes alone", () => {
    expect(splitCitations("[S] [s1] [S1a] S1")).toEqual([{ type: "text", value: "[S] [s1] [S1a] S1" }]);
  });

  it("lists cited ids once, in order, and orders sources cited first", () => {
    const answer = "a [S2] b [S1] c [S2]";
    expect(citedIds(answer)).toEqual(["S2", "S1"]);
    const ordered = orderSources(answer, [source("S1"), source("S2"), source("S3")]);
    expect(ordered.map((o) => [o.source.id, o.cited])).toEqual([
      ["S2", true],
      ["S1", true],
      ["S3", false],
    ]);
  });
});

describe("MarkdownAnswer", () => {
  const render = (text: string, sources: Source[] = [source("S1")]) =>
    renderToStaticMarkup(createElement(MarkdownAnswer, { text, sources }));

  it("turns markers into citation buttons previewing the snippet", () => {
    const html = render("The notice period is **2 months** [S1].");
    expect(html).toContain("<strong>2 months</strong>");
    expect(html).toMatch(/<button[^>]*data-cite="S1"[^>]*>S1<\/button>/);
    expect(html).toContain("snippet of S1");
    expect(html).toContain("employee-handbook.md");
  });

  it("links markers inside lists and tables too, but never inside code", () => {
    const html = render("- first [S1]\n\n| a | b |\n|---|---|\n| x [S1] | y |\n\n`[S1]`\n\n```\n[S1]\n```");
    expect(html.match(/data-cite="S1"/g)?.length).toBe(2);
    expect(html).toContain("<code>[S1]</code>");
  });

  it("drops raw HTML and unsafe links", () => {
    const html = render(
      '<script>alert(1)</script>\n\nText <img src=x onerror="alert(2)"> [bad](javascript:alert(3)) ok',
    );
    expect(html).not.toContain("<script");
    expect(html).not.toContain("onerror");
    expect(html).not.toContain("javascript:");
    expect(html).toContain("ok");
    expect(html).toContain(">bad</a>");
  });

  it("highlights fenced code with a language", () => {
    const html = render("```python\ndef f():\n    return 1\n```");
    expect(html).toContain('class="hljs language-python"');
    expect(html).toContain('<span class="hljs-keyword">def</span>');
  });
});
