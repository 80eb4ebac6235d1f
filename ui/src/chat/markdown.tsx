// Minimal Markdown for untrusted text (model output, tool results, anything a message holds).
//
// The text is split into blocks and inline runs by hand and turned into Preact elements whose
// children are strings, so Preact puts every character into a text node: markup in a message is
// shown, never parsed by the browser. Nothing here builds HTML from strings, and no link is ever
// made clickable — a link is shown as its text followed by its address, so `javascript:` and
// other schemes have nothing to run and the webview never navigates away from Flame. Fenced code
// is highlighted by `CodeBlock`, which keeps the same guarantee (see code-block.tsx).

import type { ComponentChildren, VNode } from "preact";

import { CodeBlock } from "./code-block";

/** One block of a message: a paragraph, a fenced code block, a list or a heading. */
export type Block =
  | { kind: "paragraph"; text: string }
  | { kind: "heading"; text: string }
  | { kind: "code"; language: string; text: string }
  | { kind: "list"; ordered: boolean; items: string[] };

// An opening fence's language is the first word of its info string (```rust title="x" is rust);
// a closing fence has no info string, so a fence with one inside a block is the block's text.
const OPENING_FENCE = /^\s*```\s*([\w+#.-]*)[^`]*$/;
const CLOSING_FENCE = /^\s*```\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const HEADING = /^\s*#{1,6}\s+(.*)$/;

/** Splits text into blocks. Pure, so the rules are tested without a DOM. */
export function parseBlocks(text: string): Block[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join("\n") });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = OPENING_FENCE.exec(line);
    if (fence) {
      endParagraph();
      const body: string[] = [];
      i++;
      // An unclosed fence runs to the end, as it does while a reply is still streaming.
      while (i < lines.length && !CLOSING_FENCE.test(lines[i] ?? "")) body.push(lines[i++] ?? "");
      blocks.push({ kind: "code", language: fence[1] ?? "", text: body.join("\n") });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      endParagraph();
      const ordered = numbered !== null;
      const item = (bullet ?? numbered)?.[1] ?? "";
      const last = blocks[blocks.length - 1];
      if (last?.kind === "list" && last.ordered === ordered) last.items.push(item);
      else blocks.push({ kind: "list", ordered, items: [item] });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      blocks.push({ kind: "heading", text: heading[1] ?? "" });
      continue;
    }
    if (line.trim() === "") endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  return blocks;
}

/** One inline run: plain text, `code`, **bold** or a [link](address). */
export type Inline =
  | { kind: "text"; text: string }
  | { kind: "code"; text: string }
  | { kind: "bold"; text: string }
  | { kind: "link"; text: string; address: string };

const INLINE = /`([^`\n]+)`|\*\*([^*\n]+?)\*\*|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

/** Splits a block's text into inline runs. */
export function parseInline(text: string): Inline[] {
  const runs: Inline[] = [];
  let at = 0;
  for (const match of text.matchAll(INLINE)) {
    const start = match.index;
    if (start > at) runs.push({ kind: "text", text: text.slice(at, start) });
    if (match[1] !== undefined) runs.push({ kind: "code", text: match[1] });
    else if (match[2] !== undefined) runs.push({ kind: "bold", text: match[2] });
    else runs.push({ kind: "link", text: match[3] ?? "", address: match[4] ?? "" });
    at = start + match[0].length;
  }
  if (at < text.length) runs.push({ kind: "text", text: text.slice(at) });
  return runs;
}

function renderInline(text: string): ComponentChildren {
  return parseInline(text).map((run, i) => {
    switch (run.kind) {
      case "text":
        return run.text;
      case "code":
        return <code key={i}>{run.text}</code>;
      case "bold":
        return <strong key={i}>{run.text}</strong>;
      case "link":
        return (
          <span key={i} class="md-link" title={run.address}>
            {run.text} <span class="muted">({run.address})</span>
          </span>
        );
    }
  });
}

/** A message's text as escaped elements with minimal Markdown. */
export function Markdown({ text }: { text: string }): VNode {
  return (
    <div class="markdown">
      {parseBlocks(text).map((block, i) => {
        switch (block.kind) {
          case "paragraph":
            return <p key={i}>{renderInline(block.text)}</p>;
          case "heading":
            return (
              <p key={i} class="md-heading">
                <strong>{renderInline(block.text)}</strong>
              </p>
            );
          case "code":
            return <CodeBlock key={i} text={block.text} language={block.language} />;
          case "list": {
            const items = block.items.map((item, j) => <li key={j}>{renderInline(item)}</li>);
            return block.ordered ? <ol key={i}>{items}</ol> : <ul key={i}>{items}</ul>;
          }
        }
      })}
    </div>
  );
}
