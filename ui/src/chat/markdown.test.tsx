import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";

import { Markdown, parseBlocks, parseInline } from "./markdown";

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
