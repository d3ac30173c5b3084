/**
 * remark plugin: wraps the parts of an answer that `validation.sources.unsupported` lists (character spans in
 * the answer's Markdown source) in `<span class="unsupported">`, which the UI underlines with "Not found in the
 * sources". Text nodes are split at the spans by their source offsets; a node whose text differs from its source
 * (escapes, entities) is marked whole when it overlaps a span.
 */

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
  position?: { start: { offset?: number }; end: { offset?: number } };
  data?: { hName?: string; hProperties?: Record<string, unknown> };
}

export interface Span {
  start: number;
  end: number;
}

export const UNSUPPORTED_TITLE = "Not found in the sources";

/** Said after a marked claim to a screen reader, which reads neither the underline nor (mostly) the title. */
const SPOKEN: MdNode = {
  type: "unsupportedNote",
  data: { hName: "span", hProperties: { className: ["visually-hidden"] } },
  children: [{ type: "text", value: ` (${UNSUPPORTED_TITLE.toLowerCase()})` }],
};

function marked(value: string): MdNode {
  return {
    type: "unsupported",
    data: { hName: "span", hProperties: { className: ["unsupported"], title: UNSUPPORTED_TITLE } },
    children: [{ type: "text", value }],
  };
}

/** A marked piece of a claim; `last`: it ends the claim, where a screen reader is told. */
function claimPiece(value: string, last: boolean): MdNode[] {
  return last ? [marked(value), SPOKEN] : [marked(value)];
}

function splitText(node: MdNode, source: string, spans: Span[]): MdNode[] {
  const from = node.position?.start.offset;
  const to = node.position?.end.offset;
  const value = node.value ?? "";
  if (from == null || to == null) return [node];
  const hits = spans.filter((s) => s.start < to && s.end > from);
  if (hits.length === 0) return [node];
  if (source.slice(from, to) !== value)
    return claimPiece(
      value,
      hits.some((s) => s.end <= to),
    );
  const out: MdNode[] = [];
  let at = 0;
  for (const s of hits) {
    const a = Math.max(0, s.start - from);
    const b = Math.min(value.length, s.end - from);
    if (a > at) out.push({ type: "text", value: value.slice(at, a) });
    if (b > Math.max(a, at)) out.push(...claimPiece(value.slice(Math.max(a, at), b), s.end <= to));
    at = Math.max(at, b);
  }
  if (at < value.length) out.push({ type: "text", value: value.slice(at) });
  return out;
}

function transform(parent: MdNode, source: string, spans: Span[]): void {
  if (!parent.children) return;
  parent.children = parent.children.flatMap((child) => {
    if (child.type === "text") return splitText(child, source, spans);
    if (child.type !== "code" && child.type !== "inlineCode") transform(child, source, spans);
    return [child];
  });
}

/** The plugin, given the spans; unified hands the transformer the parsed file, whose value is the source. */
export function remarkUnsupported(options: { spans?: Span[] } = {}) {
  const spans = [...(options.spans ?? [])].sort((a, b) => a.start - b.start);
  return (tree: MdNode, file: { value: unknown }) => {
    if (spans.length > 0) transform(tree, String(file.value), spans);
  };
}
