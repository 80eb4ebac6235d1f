import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By, until } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { status } from "./flame-cli";
import { withApp } from "./harness";

const SHARED = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/claude-code");
const SESSION = join(SHARED, "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl");

describe("import from the window", () => {
  it("imports a shared Claude Code session typed as a path and draws it", async () => {
    await withApp("imports a session", async (app) => {
      await (await app.find("[data-testid=import-button]")).click();
      const path = await app.find("[data-testid=import-form] input[name=path]");
      await path.sendKeys(SESSION);
      await (await app.find("[data-testid=import-form] button[type=submit]")).click();
      const summary = await app.driver.wait(
        until.elementLocated(By.css("[data-testid=import-summary]")),
        20_000,
        "the import summary",
      );
      expect(await summary.getText()).toContain("16 frames");
      // The graph draws the imported tree, and the store holds it.
      await app.driver.wait(
        async () => (await app.driver.findElements(By.css("[role=treeitem]"))).length === 16,
        5_000,
        "sixteen frames in the accessible tree",
      );
      const stored = status(app.home);
      expect(stored.frames.map((f) => f.title)).toContain("Explore existing codebase");
      await (await app.find("[data-testid=import-form] button[type=submit]")).click();
      expect(await app.driver.findElements(By.css("[data-testid=import-form]"))).toHaveLength(0);
    });
  });
});
