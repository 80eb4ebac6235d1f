import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";

import { settle } from "../test-backend";
import { highlightCode } from "./code-block";
import { Markdown } from "./markdown";

function shown(text: string): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  render(<Markdown text={text} />, root);
  return root;
}

/** The class names of every element under `root` that has any. */
function classNames(root: Element): string[] {
  return [...root.querySelectorAll("[class]")].flatMap((e) => [...e.classList]);
}

afterEach(() => {
  document.body.replaceChildren();
  document.title = "";
  vi.restoreAllMocks();
});

describe("highlighted code blocks", () => {
  it("colours a known language with hljs token spans and keeps the text exact", () => {
    const code = 'fn main() {\n    let x = "hi";\n    println!("{x}");\n}';
    const root = shown("```rust\n" + code + "\n```");
    const block = root.querySelector("pre.md-code");
    expect(block?.getAttribute("data-highlighted")).toBe("rust");
    expect(block?.textContent).toBe(code);
    const keyword = [...(block?.querySelectorAll("span.hljs-keyword") ?? [])].map(
      (s) => s.textContent,
    );
    expect(keyword).toContain("fn");
    expect(keyword).toContain("let");
    expect(block?.querySelector("span.hljs-string")?.textContent).toBe('"hi"');
  });

  it("reads a language's aliases (ts, py, sh, html)", () => {
    const samples = [
      ["const x: number = 1;", "ts"],
      ["def f(): pass", "py"],
      ["echo hi", "sh"],
      ["<p>hi</p>", "HTML"],
      ['[package]\nname = "flame"', "toml"],
    ] as const;
    for (const [code, alias] of samples) {
      const highlighted = highlightCode(code, alias);
      expect(highlighted.language, alias).toBe(alias.toLowerCase());
      expect(
        highlighted.nodes.some((node) => node.type === "element"),
        alias,
      ).toBe(true);
    }
  });

  it("shows an unknown language plain, without trying another grammar", () => {
    const root = shown("```brainfuck\nfn main() { let x = 1; }\n```");
    const block = root.querySelector("pre.md-code");
    expect(block?.getAttribute("data-language")).toBe("brainfuck");
    expect(block?.hasAttribute("data-highlighted")).toBe(false);
    expect(block?.querySelectorAll("span")).toHaveLength(0);
    expect(block?.textContent).toBe("fn main() { let x = 1; }");
  });

  it("guesses a fence without a language only when the guess is sure", () => {
    const rust = 'fn main() {\n    let v = vec![1, 2, 3];\n    println!("{:?}", v);\n}';
    expect(highlightCode(rust, "").language).toBe("rust");
    expect(highlightCode("The tree has three frames.\nEach one is a subtask.", "")).toEqual({
      language: null,
      nodes: [{ type: "text", value: "The tree has three frames.\nEach one is a subtask." }],
    });
  });

  const hostile = [
    "</code></pre><script>document.title='pwned'</script>",
    '<img src=x onerror="document.title=1">',
    '<svg onload="document.title=2"><script>alert(1)</script></svg>',
    '<a href="javascript:document.title=3">x</a>',
  ];
  for (const language of ["html", "javascript", "rust", "", "nonsense"]) {
    it(`keeps hostile markup inside a ${language || "bare"} fence as text`, () => {
      const code = hostile.join("\n");
      const root = shown("```" + language + "\n" + code + "\n```");
      expect(root.querySelector("pre.md-code")?.textContent).toBe(code);
      expect(root.querySelector("script, img, svg, a, iframe")).toBeNull();
      for (const element of root.querySelectorAll("pre *")) {
        expect(["code", "span"]).toContain(element.tagName.toLowerCase());
        for (const attribute of element.attributes) expect(attribute.name).toBe("class");
      }
      for (const name of classNames(root.querySelector("pre code") ?? root)) {
        expect(name).toMatch(/^hljs(-[a-z0-9_-]+)?$/);
      }
      expect(document.title).toBe("");
    });
  }

  it("highlights HTML as tokens, so the tags are coloured text", () => {
    const root = shown('```html\n<img src=x onerror="document.title=1">\n```');
    expect(root.querySelector("pre span.hljs-tag")).not.toBeNull();
    expect(root.querySelector("pre span.hljs-name")?.textContent).toBe("img");
    expect(root.querySelector("pre img")).toBeNull();
  });

  it("copies the block's text to the clipboard and says so", async () => {
    const written: string[] = [];
    vi.spyOn(navigator.clipboard, "writeText").mockImplementation((text) => {
      written.push(text);
      return Promise.resolve();
    });
    const root = shown("Before\n\n```rust\nlet a = 1;\nlet b = 2;\n```");
    const button = root.querySelector<HTMLButtonElement>(".md-code-copy");
    expect(button?.textContent).toBe("Copy");
    await act(async () => {
      button?.click();
      await settle();
    });
    expect(written).toEqual(["let a = 1;\nlet b = 2;"]);
    expect(button?.textContent).toBe("Copied");
  });

  it("says when the clipboard refuses", async () => {
    vi.spyOn(navigator.clipboard, "writeText").mockRejectedValue(new Error("not allowed"));
    const root = shown("```\nplain\n```");
    const button = root.querySelector<HTMLButtonElement>(".md-code-copy");
    await act(async () => {
      button?.click();
      await settle();
    });
    expect(button?.textContent).toBe("Copy failed");
  });
});
