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

/**
 * Counts the characters the parsers look at. A reply is parsed again on every streamed chunk, so
 * the parsers must cost a bounded number of looks per character whatever the text holds; tests
 * pass a meter to check that bound without timing anything.
 */
export interface ScanMeter {
  visited: number;
}

// What JavaScript's `\s` matches, tested one character at a time.
const WHITESPACE = /\s/;
// What the characters of a fence's language may be: ```c#, ```objective-c, ```c++, ```vb.net.
const LANGUAGE_CHAR = /[\w+#.-]/;

/** What one line of a message starts, outside fenced code. */
type Line =
  | { kind: "fence"; language: string }
  | { kind: "item"; ordered: boolean; text: string }
  | { kind: "heading"; text: string }
  | { kind: "blank" }
  | { kind: "text" };

/**
 * Reads one line from left to right, never going back, so that no line (a megabyte of spaces or
 * of backticks included) costs more than a pass or two over its characters.
 */
class LineScanner {
  at = 0;

  constructor(
    readonly line: string,
    private readonly meter: ScanMeter,
  ) {}

  /** Moves past the characters that `accept` takes and says how many there were. */
  skip(accept: (char: string) => boolean, limit = Infinity): number {
    const from = this.at;
    while (
      this.at < this.line.length &&
      this.at - from < limit &&
      accept(this.line[this.at] ?? "")
    ) {
      this.at++;
    }
    this.meter.visited += this.at - from + 1;
    return this.at - from;
  }

  skipWhitespace(): number {
    return this.skip((char) => WHITESPACE.test(char));
  }

  /** Moves past `prefix` if the line continues with it. */
  take(prefix: string): boolean {
    this.meter.visited += prefix.length;
    if (!this.line.startsWith(prefix, this.at)) return false;
    this.at += prefix.length;
    return true;
  }

  get rest(): string {
    return this.line.slice(this.at);
  }

  get ended(): boolean {
    return this.at >= this.line.length;
  }
}

const isDigit = (char: string) => char >= "0" && char <= "9";

// A closing fence has no info string, so a fence with one inside a block is the block's text.
function closesFence(line: string, meter: ScanMeter): boolean {
  const scanner = new LineScanner(line, meter);
  scanner.skipWhitespace();
  if (!scanner.take("```")) return false;
  scanner.skipWhitespace();
  return scanner.ended;
}

function readLine(line: string, meter: ScanMeter): Line {
  const scanner = new LineScanner(line, meter);
  scanner.skipWhitespace();
  if (scanner.ended) return { kind: "blank" };
  if (scanner.take("```")) {
    // An opening fence's language is the first word of its info string: ```rust title="x" is rust.
    scanner.skipWhitespace();
    const languageStart = scanner.at;
    scanner.skip((char) => LANGUAGE_CHAR.test(char));
    const language = line.slice(languageStart, scanner.at);
    // An info string with a backtick in it does not open a fence (as in CommonMark).
    scanner.skip((char) => char !== "`");
    if (scanner.ended) return { kind: "fence", language };
    return { kind: "text" };
  }
  // A bullet is one of - * + and a space; a numbered item is digits, `.` or `)` and a space.
  if (scanner.skip((char) => char === "-" || char === "*" || char === "+", 1) === 1) {
    if (scanner.skipWhitespace() > 0) return { kind: "item", ordered: false, text: scanner.rest };
    return { kind: "text" };
  }
  if (scanner.skip(isDigit) > 0) {
    if (
      scanner.skip((char) => char === "." || char === ")", 1) === 1 &&
      scanner.skipWhitespace() > 0
    ) {
      return { kind: "item", ordered: true, text: scanner.rest };
    }
    return { kind: "text" };
  }
  const hashes = scanner.skip((char) => char === "#", 7);
  if (hashes >= 1 && hashes <= 6 && scanner.skipWhitespace() > 0) {
    return { kind: "heading", text: scanner.rest };
  }
  return { kind: "text" };
}

/** Splits text into blocks. Pure, so the rules are tested without a DOM. */
export function parseBlocks(text: string, meter: ScanMeter = { visited: 0 }): Block[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join("\n") });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const read = readLine(line, meter);
    switch (read.kind) {
      case "fence": {
        endParagraph();
        const body: string[] = [];
        i++;
        // An unclosed fence runs to the end, as it does while a reply is still streaming.
        while (i < lines.length && !closesFence(lines[i] ?? "", meter)) body.push(lines[i++] ?? "");
        blocks.push({ kind: "code", language: read.language, text: body.join("\n") });
        break;
      }
      case "item": {
        endParagraph();
        const last = blocks[blocks.length - 1];
        if (last?.kind === "list" && last.ordered === read.ordered) last.items.push(read.text);
        else blocks.push({ kind: "list", ordered: read.ordered, items: [read.text] });
        break;
      }
      case "heading":
        endParagraph();
        blocks.push({ kind: "heading", text: read.text });
        break;
      case "blank":
        endParagraph();
        break;
      case "text":
        paragraph.push(line);
        break;
    }
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

/**
 * Finds the next character that ends a kind of run (a backtick, a `*`, a `]`, the end of an
 * address) at or after a position. Openers are tried from left to right, so the positions asked
 * only grow, and an answer stays right for every position up to it: each finder passes over the
 * text once in all, where searching afresh from each opener costs the square of the length (100k
 * unclosed `[` took seconds).
 */
function stopFinder(
  text: string,
  isStop: (char: string) => boolean,
  meter: ScanMeter,
): (from: number) => number {
  let askedFrom = 0;
  let answer = -1;
  return (from) => {
    if (askedFrom <= from && from <= answer) return answer;
    let at = from;
    while (at < text.length && !isStop(text[at] ?? "")) at++;
    meter.visited += at - from + 1;
    askedFrom = from;
    answer = at;
    return at;
  };
}

/**
 * How many code, bold and link runs one message may have; past them the rest of the message is
 * plain text (every character still shown). Each run is an element, and a megabyte of "`a" would
 * otherwise be half a million of them, built again on every streamed chunk.
 */
export const MAX_FORMATTED_RUNS = 10_000;

/** How `parseInline` is bounded and measured. */
export interface InlineOptions {
  /** How many code, bold and link runs to make before the rest is text. */
  formattedLimit?: number;
  meter?: ScanMeter;
}

/**
 * Splits a block's text into inline runs. A run opens at the leftmost place it can and closes at
 * the first closer after it, on the same line and with something between:
 * `code` (no backtick inside), **bold** (no `*` inside), [text](address) (no `]` in the text,
 * no `)` or space in the address). Anything that does not close is text.
 */
export function parseInline(
  text: string,
  { formattedLimit = MAX_FORMATTED_RUNS, meter = { visited: 0 } }: InlineOptions = {},
): Inline[] {
  const nextBacktick = stopFinder(text, (char) => char === "`" || char === "\n", meter);
  const nextStar = stopFinder(text, (char) => char === "*" || char === "\n", meter);
  const nextBracket = stopFinder(text, (char) => char === "]" || char === "\n", meter);
  const addressEnd = stopFinder(text, (char) => char === ")" || WHITESPACE.test(char), meter);
  const runs: Inline[] = [];
  let textStart = 0;
  let formatted = 0;
  const emit = (start: number, end: number, run: Inline) => {
    if (start > textStart) runs.push({ kind: "text", text: text.slice(textStart, start) });
    runs.push(run);
    formatted++;
    textStart = end;
  };
  let at = 0;
  while (at < text.length && formatted < formattedLimit) {
    meter.visited++;
    const char = text[at];
    if (char === "`") {
      const close = nextBacktick(at + 1);
      if (close > at + 1 && text[close] === "`") {
        emit(at, close + 1, { kind: "code", text: text.slice(at + 1, close) });
        at = close + 1;
        continue;
      }
    } else if (char === "*" && text[at + 1] === "*") {
      const close = nextStar(at + 2);
      if (close > at + 2 && text[close] === "*" && text[close + 1] === "*") {
        emit(at, close + 2, { kind: "bold", text: text.slice(at + 2, close) });
        at = close + 2;
        continue;
      }
    } else if (char === "[") {
      const close = nextBracket(at + 1);
      if (close > at + 1 && text[close] === "]" && text[close + 1] === "(") {
        const end = addressEnd(close + 2);
        if (end > close + 2 && text[end] === ")") {
          const address = text.slice(close + 2, end);
          emit(at, end + 1, { kind: "link", text: text.slice(at + 1, close), address });
          at = end + 1;
          continue;
        }
      }
    }
    at++;
  }
  if (textStart < text.length) runs.push({ kind: "text", text: text.slice(textStart) });
  return runs;
}

function renderRuns(runs: Inline[]): ComponentChildren {
  return runs.map((run, i) => {
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
  let formattedLeft = MAX_FORMATTED_RUNS;
  const renderInline = (blockText: string) => {
    const runs = parseInline(blockText, { formattedLimit: formattedLeft });
    formattedLeft -= runs.filter((run) => run.kind !== "text").length;
    return renderRuns(runs);
  };
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
