import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SourcesPanel } from "@/components/sources-panel";
import type { Source } from "@/lib/types";

const source = (extra: Partial<Source>): Source =>
  ({
    id: "S1",
    document: "travel-policy.pdf",
    page: 2,
    chunk: 1,
    snippet: "Hotels: 140 euros",
    score: 0.0328,
    ...extra,
  }) as Source;

const render = (s: Source) =>
  renderToStaticMarkup(
    <SourcesPanel messageKey="m1" answer="The limit is 140 euros [S1]." sources={[s]} highlighted={null} />,
  );

describe("a source card", () => {
  it("shows how close the passage is to the question, not the rank fusion's score", () => {
    const html = render(source({ relevance: 0.5189 }));
    expect(html).toContain("relevance 0.52");
    expect(html).not.toContain("0.03");
  });

  it("shows no figure for a source without one (an FAQ entry)", () => {
    const html = render(source({ relevance: null }));
    expect(html).not.toContain("relevance");
    expect(html).not.toContain("score");
  });
});
