import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AnswerBadges } from "@/components/answer-badges";

describe("an answer's badges", () => {
  it("let the keyboard reach a badge's reason, which only a mouse's hover showed (a UI probe)", () => {
    const html = renderToStaticMarkup(
      <AnswerBadges
        badges={[
          { label: "not in the documents", tone: "warn", title: "The passages do not state the answer" },
          { label: "searched the documents", tone: "info" },
        ]}
      />,
    );
    const [reasoned, plain] = html.split("</li>");
    expect(reasoned).toContain('tabindex="0"');
    expect(reasoned).toContain('data-reason="The passages do not state the answer"');
    expect(reasoned).toMatch(/>not in the documents$/); // the badge's text stays its label
    expect(plain).not.toContain("tabindex");
    expect(plain).not.toContain("data-reason");
  });
});
