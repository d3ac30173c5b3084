/**
 * remark plugin: turns `[S1]` markers in answer text into links to `#cite-S1`, which the Markdown
 * renderer shows as citation buttons. Code (inline and fenced) is left alone: only text nodes change.
 */
import { splitCitations } from "./citations";

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

export const CITE_PREFIX = "#cite-";

function transform(parent: MdNode): void {
  if (!parent.children) return;
  const out: MdNode[] = [];
  for (const child of parent.children) {
    if (child.type === "text" && child.value && /\[S\d/.test(child.value)) {
      for (const part of splitCitations(child.value)) {
        if (part.type === "text") out.push({ type: "text", value: part.value });
        else out.push({ type: "link", url: CITE_PREFIX + part.id, children: [{ type: "text", value: part.id }] });
      }
    } else {
      // Links keep their own text: a citation inside a link would nest anchors.
      if (child.type !== "link" && child.type !== "linkReference") transform(child);
      out.push(child);
    }
  }
  parent.children = out;
}

export function remarkCitations() {
  return (tree: MdNode) => transform(tree);
}
