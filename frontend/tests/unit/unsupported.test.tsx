import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkdownAnswer } from "@/components/markdown-answer";

const render = (text: string, spans: { start: number; end: number }[]) =>
  renderToStaticMarkup(<MarkdownAnswer text={text} unsupported={spans} />);

describe("unsupported claims in an answer", () => {
  it("underlines exactly the listed span, keeping the citation inside it a button", () => {
    const text = "Leave is 25 days [S1]. It uses R-410A refrigerant [S2]. Ask HR.";
    const start = text.indexOf("It uses");
    const end = text.indexOf("Ask HR") - 1;
    const html = render(text, [{ start, end }]);
    const marked = html.match(/<span class="unsupported" title="Not found in the sources">(.*?)<\/span>(?= Ask)/)!;
    expect(marked).not.toBeNull();
    expect(marked[1]).toContain("It uses R-410A refrigerant");
    expect(marked[1]).toContain('data-cite="S2"');
    expect(html).toContain("Leave is 25 days");
    expect(html.indexOf("Leave is")).toBeLessThan(html.indexOf('class="unsupported"'));
  });

  it("marks a span across Markdown emphasis, and nothing without spans", () => {
    const text = "The unit holds **42 litres** of coolant.";
    const html = render(text, [{ start: 0, end: text.length }]);
    expect(html.match(/class="unsupported"/g)!.length).toBeGreaterThanOrEqual(3);
    expect(render(text, [])).not.toContain("unsupported");
  });

  it("tells a screen reader, once at the end of each marked claim, what the underline and the tooltip show", () => {
    const text = "Leave is 25 days [S1]. The unit holds **42 litres** of coolant. Ask HR.";
    const start = text.indexOf("The unit");
    const html = render(text, [{ start, end: text.indexOf(" Ask HR") }]);
    // the title alone is not read by most screen readers, and the underline not at all (tester)
    const spoken = html.match(/<span class="visually-hidden"> \(not found in the sources\)<\/span>/g);
    expect(spoken).toHaveLength(1);
    expect(html.indexOf("visually-hidden")).toBeGreaterThan(html.indexOf("coolant"));
    expect(html.indexOf("visually-hidden")).toBeLessThan(html.indexOf("Ask HR"));
    expect(render(text, [])).not.toContain("visually-hidden");
  });
});
