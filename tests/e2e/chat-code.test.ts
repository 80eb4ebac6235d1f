// Code in messages and the composer's keyboard, in the real window: a fenced block is highlighted
// into highlight.js token spans under the app's strict CSP, markup inside a block stays text and
// runs nothing, and the slash list is driven with the arrow keys.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { flame, frameId } from "./flame-cli";
import { withApp } from "./harness";

const RUST = [
  "Here is the loop:",
  "",
  "```rust",
  "fn main() {",
  '    let frames = vec!["root", "child"];',
  "    for frame in &frames {",
  '        println!("{frame}"); // one per line',
  "    }",
  "}",
  "```",
].join("\n");

const HOSTILE = [
  "```html",
  "</code></pre><script>document.title='pwned'</script>",
  '<img src=x onerror="document.title=1">',
  "```",
].join("\n");

/** A tree whose focused frame holds a Rust block and a block of hostile HTML. */
function codeHome(into: { frame: string }) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    flame(home, "tree", "new", "Build the app", "--criteria", "It works");
    into.frame = frameId(home, "push", "Loop over frames", "--criteria", "Each frame is printed");
    flame(home, "append", into.frame, "--role", "user", "Show me the loop");
    flame(home, "append", into.frame, "--role", "assistant", RUST);
    flame(home, "append", into.frame, "--role", "assistant", HOSTILE);
    return home;
  };
}

describe("code in the chat pane", () => {
  it("highlights a fenced Rust block and keeps markup in a block as text", async () => {
    const tree = { frame: "" };
    await withApp(
      "highlighted code",
      async (app) => {
        await app.find(`[data-testid=focused-frame][data-frame-id="${tree.frame}"]`);
        const titleBefore = await app.driver.getTitle();
        const rust = await app.find("pre[data-highlighted=rust]");
        const keywords = await rust.findElements(By.css("span.hljs-keyword"));
        const words = await Promise.all(keywords.map((k) => k.getText()));
        expect(words).toEqual(expect.arrayContaining(["fn", "let", "for", "in"]));
        expect(await rust.findElements(By.css("span.hljs-string"))).not.toHaveLength(0);
        expect(await rust.findElements(By.css("span.hljs-comment"))).toHaveLength(1);
        // The colours come from the app's stylesheet, which the CSP allows; a keyword is not
        // drawn in the text colour.
        const keywordColour = await keywords[0]?.getCssValue("color");
        const textColour = await rust.getCssValue("color");
        expect(keywordColour).not.toBe(textColour);
        // Copy goes through the webview's clipboard API, with no backend involved.
        const copy = await app.find(".md-code-block:has(pre[data-highlighted=rust]) .md-code-copy");
        await copy.click();
        await app.driver.wait(
          async () => (await copy.getText()) !== "Copy",
          5_000,
          "the copy ends",
        );
        expect(await copy.getText()).toBe("Copied");

        const html = await app.find("pre[data-highlighted=html]");
        expect(await html.getText()).toContain("<script>document.title='pwned'</script>");
        expect(await html.getText()).toContain('<img src=x onerror="document.title=1">');
        const planted = await app.driver.findElements(
          By.css("[data-testid=messages] script, [data-testid=messages] img"),
        );
        expect(planted).toHaveLength(0);
        // Give an onerror handler, had one been made, time to run.
        await app.driver.sleep(300);
        expect(await app.driver.getTitle()).toBe(titleBefore);
      },
      { prepareHome: codeHome(tree) },
    );
  });

  it("drives the slash list with the arrow keys and Enter", async () => {
    const tree = { frame: "" };
    await withApp(
      "slash list keys",
      async (app) => {
        const box = await app.find("[data-testid=composer] textarea");
        await box.sendKeys("/st");
        await app.find("[data-testid=completions]");
        expect(await box.getAttribute("aria-activedescendant")).toBe("slash-option-start");
        await box.sendKeys(Key.ARROW_DOWN);
        expect(await box.getAttribute("aria-activedescendant")).toBe("slash-option-status");
        const selected = await app.find("[data-testid=completions] [aria-selected=true]");
        expect(await selected.getText()).toContain("/status");
        await box.sendKeys(Key.ENTER);
        expect(await box.getAttribute("value")).toBe("/status ");
        await box.sendKeys(Key.ENTER);
        const card = await app.find("[data-testid=status-card]");
        expect(await card.getText()).toContain("Loop over frames");
      },
      { prepareHome: codeHome(tree) },
    );
  });
});
