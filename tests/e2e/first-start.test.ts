// The first start of a new data directory: the sample tree from the specification is there to
// explore, and deleting it leaves an empty Flame that never brings it back.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { By } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { flame } from "./flame-cli";
import { withApp, textOf } from "./harness";

interface TreeEntry {
  tree: { id: string; title: string };
}

let kept = "";

/** The text of what matches `css` now; empty when nothing does. Read afresh, since a pane that
 * re-renders replaces its elements. */
beforeAll(async () => {
  kept = await mkdtemp(join(tmpdir(), "flame-e2e-first-start-"));
});

afterAll(async () => {
  await rm(kept, { recursive: true, force: true });
});

describe("the first start", () => {
  it("shows the sample tree, which can be explored and deleted for good", async () => {
    const home = join(kept, "home");
    await withApp(
      "first start",
      async (app) => {
        // The spec's example, focused where the work is.
        await app.find("[data-testid=focused-frame]");
        expect(await textOf(app, "[data-testid=focused-frame]")).toContain("CRUD Endpoints");
        const items = await app.driver.findElements(By.css("[role=treeitem]"));
        const labels = await Promise.all(items.map((i) => i.getAttribute("textContent")));
        for (const title of [
          "Build the application",
          "User Authentication",
          "API Routes",
          "Pagination",
        ]) {
          expect(
            labels.some((l) => (l ?? "").startsWith(title)),
            title,
          ).toBe(true);
        }
        // Its conversation reads like one, code included.
        await app.find("[data-testid=message] pre code");
        // The completed sibling's results are in this frame's context, as the spec says.
        await (await app.find("[data-testid=inspector-toggle]")).click();
        await app.driver.wait(
          async () =>
            (await textOf(app, "[data-testid=context-inspector]")).includes(
              "Implemented JWT-based auth",
            ),
          10_000,
          "the sibling's results in the context",
        );

        await (await app.find("[data-testid=delete-tree-button]")).click();
        const dialog = await app.find("[data-testid=delete-tree-dialog]");
        expect(await dialog.getText()).toContain("Delete “Build the application”?");
        expect(await dialog.getText()).toContain("7 frames");
        await (await dialog.findElement(By.css("button[type=submit]"))).click();
        await app.find("[data-testid=new-tree-form]");
        expect(flame(app.home, "tree", "list")).toEqual([]);
      },
      { prepareHome: () => Promise.resolve(home) },
    );
    // The next start finds an empty Flame: the sample does not come back.
    await withApp(
      "second start",
      async (app) => {
        await app.find("[data-testid=new-tree-form]");
        expect(flame(app.home, "tree", "list")).toEqual([]);
      },
      { prepareHome: () => Promise.resolve(home) },
    );
  });

  it("switches between trees and creates one from the tree menu", async () => {
    await withApp("tree menu", async (app) => {
      await app.find("[data-testid=focused-frame]");
      await (await app.find("[data-testid=new-tree-button]")).click();
      const form = await app.find("[role=dialog] [data-testid=new-tree-form]");
      await (await form.findElement(By.css("input[name=title]"))).sendKeys("Write the book");
      await (await form.findElement(By.css("textarea[name=criteria]"))).sendKeys("Ten chapters");
      await (await form.findElement(By.css("button[type=submit]"))).click();
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=focused-frame]")).includes("Write the book"),
        10_000,
        "the new tree in focus",
      );
      const trees = flame(app.home, "tree", "list") as TreeEntry[];
      expect(trees.map((t) => t.tree.title)).toEqual(["Build the application", "Write the book"]);

      // Back to the sample through the tree menu.
      const select = await app.find("[data-testid=tree-select]");
      await select
        .findElement(By.css(`option[value="${trees[0]?.tree.id}"]`))
        .then((o) => o.click());
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=focused-frame]")).includes("CRUD Endpoints"),
        10_000,
        "the sample tree back in focus",
      );
    });
  });
});
