// The command palette in the real window, driven with the real keyboard: Ctrl+Shift+P opens it,
// "sett" and Enter open the settings; a frame's title and Enter focus that frame, which the store
// then says is the focus. The tree is built with the `flame` command line.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { flame, frameId, status } from "./flame-cli";
import { keepScreenshot, withApp, type App } from "./harness";

interface Tree {
  design: string;
  implement: string;
}

/** Build the app › Design (completed) and Implement (in progress, focused). */
function treeHome(into: Tree) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    flame(home, "tree", "new", "Build the app", "--criteria", "It works");
    into.design = frameId(home, "push", "Design the screens", "--criteria", "A plan exists");
    flame(home, "pop", "--status", "completed", "--results", "Two panes: graph and chat");
    into.implement = frameId(home, "push", "Implement", "--criteria", "Code exists");
    return home;
  };
}

/** Presses Ctrl+Shift+P where the focus is, and waits for the palette's query box. */
async function openPalette(app: App) {
  const active = await app.driver.switchTo().activeElement();
  await active.sendKeys(Key.chord(Key.CONTROL, Key.SHIFT, "p"));
  const query = await app.find("[data-testid=palette-query]");
  await app.driver.wait(
    () =>
      app.driver.executeScript<boolean>(
        "return document.activeElement?.dataset.testid === 'palette-query'",
      ),
    5_000,
    "the focus in the palette's query box",
  );
  return query;
}

/** Keeps a screenshot once two frames have been drawn, so it shows the list as it is now. */
async function screenshot(app: App, name: string) {
  await app.driver.executeAsyncScript(
    "const done = arguments[arguments.length - 1];" +
      "requestAnimationFrame(() => requestAnimationFrame(() => done()));",
  );
  await keepScreenshot(app, name);
}

describe("the command palette", () => {
  it("opens the settings and focuses a frame by its title", async () => {
    const tree = {} as Tree;
    await withApp(
      "palette",
      async (app) => {
        await app.find(`[data-testid=focused-frame][data-frame-id="${tree.implement}"]`);

        let query = await openPalette(app);
        expect(await (await app.find("[data-testid=palette]")).getAttribute("role")).toBe("dialog");
        // What the backend allows with the focused frame is read as the palette opens: Pop…
        // is offered for the in-progress frame, Resume is not.
        await app.find('[data-action="frame.pop"][aria-disabled="false"]');
        expect(
          await (await app.find('[data-action="frame.resume"]')).getAttribute("aria-disabled"),
        ).toBe("true");
        await screenshot(app, "palette-all");
        await query.sendKeys("sett");
        // Waits for the list drawn for the query: the one before it may still be on screen.
        await app.find(
          '[data-testid=palette-options] li[aria-selected=true][data-action="app.settings"]',
        );
        await query.sendKeys(Key.ENTER);
        await app.find("[data-testid=settings-dialog]");
        expect(await app.driver.findElements(By.css("[data-testid=palette]"))).toHaveLength(0);
        const cancel = await app.driver.findElement(
          By.xpath("//*[@data-testid='settings-dialog']//button[normalize-space()='Cancel']"),
        );
        await cancel.click();
        await app.driver.wait(
          async () =>
            (await app.driver.findElements(By.css("[data-testid=settings-dialog]"))).length === 0,
          5_000,
          "the settings closed",
        );

        query = await openPalette(app);
        await query.sendKeys("design the screens");
        await app.find(
          `[data-testid=palette-options] li[aria-selected=true][data-action="focus.${tree.design}"]`,
        );
        await screenshot(app, "palette");
        await query.sendKeys(Key.ENTER);
        await app.find(`[data-testid=focused-frame][data-frame-id="${tree.design}"]`);
        expect(status(app.home).focus).toBe(tree.design);
      },
      { prepareHome: treeHome(tree) },
    );
  });
});
