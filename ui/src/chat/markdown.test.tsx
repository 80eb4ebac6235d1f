import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";

import {
  Markdown,
  MAX_FORMATTED_RUNS,
  parseBlocks,
  parseInline,
  type Block,
  type Inline,
  type ScanMeter,
} from "./markdown";

function shown(text: string): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  render(<Markdown text={text} />, root);
  return root;
}

/** Every element under `root`, with every attribute, so a test can say none is dangerous. */
function elementsAndAttributes(root: HTMLElement): { tag: string; attributes: string[] }[] {
  return [...root.querySelectorAll("*")].map((element) => ({
    tag: element.tagName.toLowerCase(),
    attributes: [...element.attributes].map((a) => `${a.name}=${a.value}`),
  }));
}

const ALLOWED_TAGS = new Set([
  "div",
  "p",
  "pre",
  "code",
  "strong",
  "ul",
  "ol",
  "li",
  "span",
  "button",
]);

afterEach(() => {
  document.body.replaceChildren();
  document.title = "";
});

describe("hostile messages render as text", () => {
  const payloads = [
    '<script>document.title="pwned"</script>',
    '<img src=x onerror="document.title=1">',
    '[click me](javascript:document.title="pwned")',
    '<svg onload="document.title=1"><script>alert(1)</script></svg>',
    '<a href="javascript:alert(1)">link</a>',
    "```html\n<img src=x onerror=alert(1)>\n```",
    "**<iframe src=javascript:alert(1)>**",
    "- <b onmouseover=alert(1)>item</b>\n- `<script>`",
  ];

  for (const payload of payloads) {
    it(`shows ${JSON.stringify(payload)} without making elements of it`, () => {
      const root = shown(payload);
      for (const { tag, attributes } of elementsAndAttributes(root)) {
        expect(ALLOWED_TAGS.has(tag), `unexpected <${tag}>`).toBe(true);
        for (const attribute of attributes) {
          expect(attribute).toMatch(/^(class|title|data-language|data-highlighted|type=button$)/);
        }
      }
      expect(root.querySelector("script, img, svg, iframe, a, b")).toBeNull();
      expect(document.title).toBe("");
    });
  }

  it("keeps the markup's characters visible", () => {
    const root = shown('<img src=x onerror="document.title=1">');
    expect(root.textContent).toBe('<img src=x onerror="document.title=1">');
  });

  it("never turns a link into an anchor: a javascript: link is its text and its address", () => {
    const root = shown("[docs](javascript:alert(1)) and [site](https://example.com/a)");
    expect(root.querySelector("a")).toBeNull();
    expect(root.textContent).toContain("docs (javascript:alert(1");
    expect(root.textContent).toContain("site (https://example.com/a)");
  });
});

describe("minimal Markdown", () => {
  it("splits paragraphs on blank lines and keeps line breaks inside one", () => {
    expect(parseBlocks("one\ntwo\n\nthree")).toEqual([
      { kind: "paragraph", text: "one\ntwo" },
      { kind: "paragraph", text: "three" },
    ]);
  });

  it("reads fenced code verbatim, even Markdown inside it, and an unclosed fence to the end", () => {
    expect(parseBlocks("```rust\nlet **x** = 1;\n```\nafter")).toEqual([
      { kind: "code", language: "rust", text: "let **x** = 1;" },
      { kind: "paragraph", text: "after" },
    ]);
    expect(parseBlocks("```\nstill streaming")).toEqual([
      { kind: "code", language: "", text: "still streaming" },
    ]);
  });

  it("takes a fence's language from the first word of its info, and closes only on a bare fence", () => {
    expect(parseBlocks('```rust title="main.rs"\nfn main() {}\n```')).toEqual([
      { kind: "code", language: "rust", text: "fn main() {}" },
    ]);
    expect(parseBlocks("```markdown\n```python\nx = 1\n```")).toEqual([
      { kind: "code", language: "markdown", text: "```python\nx = 1" },
    ]);
    expect(parseBlocks("```c#\nvar x = 1;\n```")).toEqual([
      { kind: "code", language: "c#", text: "var x = 1;" },
    ]);
  });

  it("groups bullets and numbered items into lists", () => {
    expect(parseBlocks("- a\n* b\n1. c\n2) d")).toEqual([
      { kind: "list", ordered: false, items: ["a", "b"] },
      { kind: "list", ordered: true, items: ["c", "d"] },
    ]);
  });

  it("finds code, bold and links inline", () => {
    expect(parseInline("use `x` **now** see [a](https://b)")).toEqual([
      { kind: "text", text: "use " },
      { kind: "code", text: "x" },
      { kind: "text", text: " " },
      { kind: "bold", text: "now" },
      { kind: "text", text: " see " },
      { kind: "link", text: "a", address: "https://b" },
    ]);
  });

  it("renders the elements it parsed", () => {
    const root = shown(
      "# Title\n\nSome `code` and **bold**.\n\n- one\n- two\n\n```\nfn main() {}\n```",
    );
    expect(root.querySelector(".md-heading strong")?.textContent).toBe("Title");
    expect(root.querySelector("p code")?.textContent).toBe("code");
    expect(root.querySelector("p:not(.md-heading) strong")?.textContent).toBe("bold");
    expect([...root.querySelectorAll("ul li")].map((li) => li.textContent)).toEqual(["one", "two"]);
    expect(root.querySelector("pre code")?.textContent).toBe("fn main() {}");
  });
});

// The regular expressions the parsers replaced, kept as the statement of what they must still do:
// the parsers now read each character a fixed number of times, which these did not (backtracking
// made 100k `[` or a long fence line cost the square of their length).
const REFERENCE_INLINE = /`([^`\n]+)`|\*\*([^*\n]+?)\*\*|\[([^\]\n]+)\]\(([^)\s]+)\)/g;
const REFERENCE_OPENING_FENCE = /^\s*```\s*([\w+#.-]*)[^`]*$/;
const REFERENCE_CLOSING_FENCE = /^\s*```\s*$/;
const REFERENCE_BULLET = /^\s*[-*+]\s+(.*)$/;
const REFERENCE_NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const REFERENCE_HEADING = /^\s*#{1,6}\s+(.*)$/;

function referenceInline(text: string): Inline[] {
  const runs: Inline[] = [];
  let at = 0;
  for (const match of text.matchAll(REFERENCE_INLINE)) {
    if (match.index > at) runs.push({ kind: "text", text: text.slice(at, match.index) });
    if (match[1] !== undefined) runs.push({ kind: "code", text: match[1] });
    else if (match[2] !== undefined) runs.push({ kind: "bold", text: match[2] });
    else runs.push({ kind: "link", text: match[3] ?? "", address: match[4] ?? "" });
    at = match.index + match[0].length;
  }
  if (at < text.length) runs.push({ kind: "text", text: text.slice(at) });
  return runs;
}

function referenceBlocks(text: string): Block[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join("\n") });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = REFERENCE_OPENING_FENCE.exec(line);
    if (fence) {
      endParagraph();
      const body: string[] = [];
      i++;
      while (i < lines.length && !REFERENCE_CLOSING_FENCE.test(lines[i] ?? "")) {
        body.push(lines[i++] ?? "");
      }
      blocks.push({ kind: "code", language: fence[1] ?? "", text: body.join("\n") });
      continue;
    }
    const item = REFERENCE_BULLET.exec(line) ?? REFERENCE_NUMBERED.exec(line);
    if (item) {
      endParagraph();
      const ordered = !REFERENCE_BULLET.test(line);
      const last = blocks[blocks.length - 1];
      if (last?.kind === "list" && last.ordered === ordered) last.items.push(item[1] ?? "");
      else blocks.push({ kind: "list", ordered, items: [item[1] ?? ""] });
      continue;
    }
    const heading = REFERENCE_HEADING.exec(line);
    if (heading) {
      endParagraph();
      blocks.push({ kind: "heading", text: heading[1] ?? "" });
    } else if (line.trim() === "") endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  return blocks;
}

/** Deterministic texts made of the pieces Markdown cares about (a fixed-seed linear congruence). */
function* randomTexts(pieces: string[], count: number, maxPieces: number): Generator<string> {
  let seed = 20_241_123;
  const next = (bound: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % bound;
  };
  for (let i = 0; i < count; i++) {
    const length = next(maxPieces + 1);
    let text = "";
    for (let j = 0; j < length; j++) text += pieces[next(pieces.length)] ?? "";
    yield text;
  }
}

describe("the parsers read as the regular expressions they replaced did", () => {
  it("finds the same inline runs in 20,000 generated texts", () => {
    const pieces = ["`", "``", "*", "**", "[", "]", "(", ")", "](", " ", "\t", "\n", "a", "b"];
    for (const text of randomTexts(pieces, 20_000, 14)) {
      expect(parseInline(text), JSON.stringify(text)).toEqual(referenceInline(text));
    }
  });

  it("finds the same blocks in 20,000 generated texts", () => {
    const pieces = ["```", "`", "-", "*", "+", "1", "23", ".", ")", "#", "###", "c#", "x"];
    pieces.push(" ", "\t", "\n", "\n", "\r\n", "\r", "\u00a0");
    for (const text of randomTexts(pieces, 20_000, 16)) {
      expect(parseBlocks(text), JSON.stringify(text)).toEqual(referenceBlocks(text));
    }
  });
});

/**
 * How many times, at most, the parsers may look at each character of a message. A parser that
 * searches afresh from every opener looks at each character about (length / 2) times, hundreds of
 * thousands here, so this catches it without timing anything.
 */
const VISITS_PER_CHAR = 8;

describe("a megabyte of hostile Markdown costs a fixed number of looks per character", () => {
  const MEGABYTE = 1_000_000;
  const fill = (unit: string) => unit.repeat(Math.ceil(MEGABYTE / unit.length));
  const nestedLines = Array.from(
    { length: 2_000 },
    (_, i) => "> ".repeat(i % 250) + "- ".repeat(i % 250) + "x",
  );
  const hostile: [string, string][] = [
    ["a million [", fill("[")],
    ["a million *", fill("*")],
    ["a million backticks", fill("`")],
    ["[a]( over and over", fill("[a](")],
    ["**a over and over", fill("**a")],
    ["`a over and over", fill("`a")],
    ["[a] over and over, then (", fill("[a]") + "("],
    ["deeply nested > and list markers on one line", fill("> - * + 1. ")],
    ["deeply nested > and list markers, line after line", nestedLines.join("\n").repeat(2)],
    ["a megabyte on one line", fill("word `code **bold [link](x ")],
    ["a fence whose info runs a megabyte to a backtick", "```" + fill("a") + "`"],
    ["a fence whose info is a megabyte of spaces and a backtick", "```" + fill(" ") + "`"],
    ["a bullet and a megabyte of spaces", "-" + fill(" ") + "\u2028"],
    ["a megabyte of #", fill("#")],
    ["a megabyte of digits", fill("1")],
    ["a megabyte of empty lines", fill("\n")],
    ["a megabyte of one-character lines", fill("*\n")],
  ];

  for (const [name, text] of hostile) {
    it(`parses and renders ${name}`, () => {
      const meter: ScanMeter = { visited: 0 };
      const inline = (blockText: string) =>
        parseInline(blockText, { meter, formattedLimit: Infinity });
      for (const block of parseBlocks(text, meter)) {
        if (block.kind === "paragraph" || block.kind === "heading") inline(block.text);
        if (block.kind === "list") block.items.forEach(inline);
      }
      expect(meter.visited).toBeGreaterThan(0);
      expect(meter.visited).toBeLessThanOrEqual(VISITS_PER_CHAR * text.length);

      expect(shown(text).querySelector(".markdown")).not.toBeNull();
    });
  }

  it("shows an unclosed opener's characters as they are", () => {
    const text = "[".repeat(100_000) + "`".repeat(3) + "[a](".repeat(1_000);
    expect(shown(text).textContent).toBe(text);
  });
});

describe("the limit on formatted runs", () => {
  it(`formats ${MAX_FORMATTED_RUNS} runs in a message and shows the rest as written`, () => {
    const half = "`a` ".repeat(MAX_FORMATTED_RUNS / 2);
    const root = shown(`${half}\n\n${half}\`b\` **past** [the](limit)`);
    expect(root.querySelectorAll("code")).toHaveLength(MAX_FORMATTED_RUNS);
    expect(root.querySelector("strong, .md-link")).toBeNull();
    const shownLast = root.querySelector("p:last-child")?.textContent ?? "";
    expect(shownLast.slice(-29)).toBe("a a `b` **past** [the](limit)");
  });

  it("stops making runs at the limit it is given", () => {
    expect(parseInline("`a` `b` `c`", { formattedLimit: 2 })).toEqual([
      { kind: "code", text: "a" },
      { kind: "text", text: " " },
      { kind: "code", text: "b" },
      { kind: "text", text: " `c`" },
    ]);
  });
});
