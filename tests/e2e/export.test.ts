// Export… in the real window: a subtree as JSON, the tree as Markdown and a frame's assembled
// context, each to a path typed into the dialog (the system's save dialog cannot be driven through
// WebDriver). The files are read back, and the JSON is imported with the `flame` command line and
// exported again to show that it round-trips.

import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By, Key, Origin, until, type WebElement } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { flame, frameId } from "./flame-cli";
import { keepScreenshot, rectOf, withApp, type App } from "./harness";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

interface Tree {
  root: string;
  design: string;
  sketch: string;
  implement: string;
}

/** Ship the export › Design (completed) › Sketch (completed); and Implement (in progress). The
 * focus is on Design. */
function treeHome(into: Tree) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    into.root = (
      flame(home, "tree", "new", "Ship the export", "--criteria", "Files come out") as {
        root: string;
      }
    ).root;
    into.design = frameId(home, "push", "Design", "--criteria", "A plan exists");
    flame(home, "append", into.design, "--role", "user", "Plan the dialog");
    into.sketch = frameId(home, "push", "Sketch", "--criteria", "A drawing exists");
    flame(home, "append", into.sketch, "--role", "assistant", "Three radio groups and a path");
    flame(home, "pop", "--status", "completed", "--results", "sketch-results: drawn");
    flame(home, "pop", "--status", "completed", "--results", "design-results: planned");
    into.implement = frameId(home, "push", "Implement", "--criteria", "Code exists");
    flame(home, "append", into.implement, "--role", "user", "Write it");
    flame(home, "focus", into.design);
    return home;
  };
}

/** Ids replaced by their order of first appearance, so two exports of one tree compare equal. */
function withoutIds(text: string): unknown {
  const value = JSON.parse(text) as {
    tree: { focus: string | null };
    frames: { id: string; parent: string | null; retry_of: string | null }[];
  };
  const names = new Map<string, string>();
  for (const f of value.frames) names.set(f.id, `frame-${names.size}`);
  const rename = (id: string | null) => (id === null ? null : (names.get(id) ?? id));
  value.tree.focus = rename(value.tree.focus);
  for (const f of value.frames) {
    f.id = rename(f.id) ?? f.id;
    f.parent = rename(f.parent);
    f.retry_of = rename(f.retry_of);
  }
  return value;
}

let out: string;
beforeAll(async () => {
  // Lower case on purpose: after a pointer action (the right-click below) WebKitWebDriver types
  // capitals as small letters, and the paths are typed.
  out = join(tmpdir(), `flame-export-e2e-${process.pid}-${Date.now()}`);
  await mkdir(out);
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

/** Chooses what and which frames, types the path over the suggested one, and exports. */
async function exportAs(
  app: App,
  kind: "markdown" | "json" | "context",
  scope: "frame" | "subtree" | "tree" | null,
  path: string,
): Promise<string> {
  const dialog = await app.find("[data-testid=export-dialog]");
  await (await dialog.findElement(By.css(`input[name=kind][value=${kind}]`))).click();
  if (scope !== null) {
    await (await dialog.findElement(By.css(`input[name=scope][value=${scope}]`))).click();
  }
  const input: WebElement = await dialog.findElement(By.css("input[name=path]"));
  await input.sendKeys(Key.chord(Key.CONTROL, "a"), Key.BACK_SPACE);
  await input.sendKeys(path);
  expect(await input.getAttribute("value")).toBe(path);
  await (await dialog.findElement(By.css("[data-testid=export-submit]"))).click();
  const result = await app.driver.wait(
    until.elementLocated(By.css("[data-testid=export-result]")),
    20_000,
    "the export's result",
  );
  return result.getText();
}

async function closeDialog(app: App): Promise<void> {
  await (await app.find("[data-testid=export-submit]")).click();
  await app.driver.wait(
    async () => (await app.driver.findElements(By.css("[data-testid=export-dialog]"))).length === 0,
    5_000,
    "the dialog closes",
  );
}

describe("export from the window", () => {
  it("writes a subtree as JSON that imports back, the tree as Markdown, and the context", async () => {
    const tree = {} as Tree;
    await withApp(
      "exports to typed paths",
      async (app) => {
        await app.find(`[data-testid=focused-frame][data-frame-id="${tree.design}"]`);

        // The subtree of the focused frame as JSON.
        await (await app.find("[data-testid=export-button]")).click();
        const jsonPath = join(out, "design.json");
        expect(await exportAs(app, "json", "subtree", jsonPath)).toBe(
          `Exported 2 frames (2 messages) to ${jsonPath}`,
        );
        const json = await readFile(jsonPath, "utf8");
        const doc = JSON.parse(json) as {
          format: string;
          frames: { id: string; parent: string | null; title: string; results: string | null }[];
        };
        expect(doc.format).toBe("flame-export");
        expect(doc.frames.map((f) => [f.title, f.parent])).toEqual([
          ["Design", null],
          ["Sketch", tree.design],
        ]);
        expect(doc.frames[1]?.results).toBe("sketch-results: drawn");

        // It imports into another data directory and exports from there identically, ids aside.
        const other = join(out, "other-home");
        await mkdir(other);
        const imported = flame(other, "import", jsonPath) as { tree: { id: string } };
        const again = JSON.stringify(flame(other, "export", imported.tree.id));
        expect(withoutIds(again)).toEqual(withoutIds(json));
        await closeDialog(app);

        // The whole tree as Markdown: one nested section per frame.
        await (await app.find("[data-testid=export-button]")).click();
        const mdPath = join(out, "tree.md");
        expect(await exportAs(app, "markdown", "tree", mdPath)).toBe(
          `Exported 4 frames (3 messages) to ${mdPath}`,
        );
        if (process.env["FLAME_DOCS_SCREENSHOT"] !== undefined) {
          await writeFile(
            join(REPO, "docs/export.png"),
            await keepScreenshot(app, "export"),
            "base64",
          );
        }
        const markdown = await readFile(mdPath, "utf8");
        expect(markdown.split("\n").filter((line) => line.startsWith("#"))).toEqual([
          "# Ship the export",
          "## Ship the export (in_progress)",
          "### Design (completed)",
          "#### Sketch (completed)",
          "### Implement (in_progress)",
        ]);
        expect(markdown).toContain("Three radio groups and a path");
        await closeDialog(app);

        // The assembled context of the focused frame: what the model would receive there.
        await (await app.find("[data-testid=export-button]")).click();
        const contextPath = join(out, "design-context.md");
        expect(await exportAs(app, "context", null, contextPath)).toMatch(
          /^Exported the context \(\d+ frames described, 1 message\) to /,
        );
        const context = await readFile(contextPath, "utf8");
        expect(context).toContain("# Context of Design");
        expect(context).toContain("<stack-context");
        expect(context).toContain("sketch-results: drawn");
        expect(context).toContain("Plan the dialog");
        expect(context, "never a child's conversation").not.toContain("Three radio groups");

        // A path in a folder that does not exist is refused in place, and nothing is written.
        const missing = join(out, "no-such-folder", "x.md");
        await closeDialog(app);
        await (await app.find("[data-testid=export-button]")).click();
        const form = await app.find("[data-testid=export-dialog]");
        const input = await form.findElement(By.css("input[name=path]"));
        await input.sendKeys(Key.chord(Key.CONTROL, "a"), Key.BACK_SPACE);
        await input.sendKeys(missing);
        await (await form.findElement(By.css("[data-testid=export-submit]"))).click();
        const alert = await app.find("[data-testid=export-dialog] [role=alert]");
        expect(await alert.getText()).toContain("does not exist");
        await (await form.findElement(By.xpath(".//button[text()='Cancel']"))).click();

        // Any frame's menu in the flame graph exports that frame: here Sketch, alone.
        const rect = await rectOf(app.driver, tree.sketch);
        await app.driver
          .actions({ async: true })
          .move({
            x: Math.round(rect.x + rect.width / 2),
            y: Math.round(rect.y + rect.height / 2),
            origin: Origin.VIEWPORT,
          })
          .contextClick()
          .perform();
        const menu = await app.find("[data-testid=context-menu]");
        await (await menu.findElement(By.xpath(".//button[span='Export…']"))).click();
        const fromGraph = await app.find("[data-testid=export-dialog]");
        expect(await fromGraph.getText()).toContain(`From “Sketch” ${tree.sketch}`);
        const lonePath = join(out, "sketch.json");
        expect(await exportAs(app, "json", "frame", lonePath)).toBe(
          `Exported 1 frame (1 message) to ${lonePath}`,
        );
        const lone = JSON.parse(await readFile(lonePath, "utf8")) as {
          frames: { title: string }[];
        };
        expect(lone.frames.map((f) => f.title)).toEqual(["Sketch"]);
      },
      { prepareHome: treeHome(tree) },
    );
  });
});
