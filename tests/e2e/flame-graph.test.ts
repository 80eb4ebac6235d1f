// The flame graph in the real window: real pointer input on the canvas, checked against the
// store through the `flame` command line.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";

import { By, Origin, until, type WebDriver } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { childTitles, flame, frameId, status } from "./flame-cli";
import { rectOf, withApp, type App, type Rect } from "./harness";

/** A point inside `rect`: `fx` of the way across, halfway down. */
function point(rect: Rect, fx: number): { x: number; y: number } {
  return { x: Math.round(rect.x + rect.width * fx), y: Math.round(rect.y + rect.height / 2) };
}

async function click(driver: WebDriver, at: { x: number; y: number }) {
  await driver
    .actions({ async: true })
    .move({ ...at, origin: Origin.VIEWPORT })
    .click()
    .perform();
}

async function drag(
  driver: WebDriver,
  from: { x: number; y: number },
  to: { x: number; y: number },
) {
  await driver
    .actions({ async: true })
    .move({ ...from, origin: Origin.VIEWPORT })
    .press()
    .move({
      x: Math.round((from.x + to.x) / 2),
      y: Math.round((from.y + to.y) / 2),
      origin: Origin.VIEWPORT,
      duration: 100,
    })
    .move({ ...to, origin: Origin.VIEWPORT, duration: 100 })
    .release()
    .perform();
}

/** Waits until `check` holds for the store, for up to three seconds. */
async function eventually(app: App, check: () => boolean, what: string) {
  await app.driver.wait(async () => Promise.resolve(check()), 3_000, what);
}

/** A data directory with a tree: Root, A (completed, with A1), B in progress, and three plans. */
interface Tree {
  root: string;
  a: string;
  b: string;
  plans: string[];
}

function treeHome(into: Tree) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    into.root = (
      flame(home, "tree", "new", "Build the app", "--criteria", "It works") as { root: string }
    ).root;
    into.a = frameId(home, "push", "Design", "--criteria", "A plan exists");
    frameId(home, "push", "Sketch", "--criteria", "Drawn");
    flame(home, "pop", "--status", "completed", "--results", "drawn");
    flame(home, "pop", "--status", "completed", "--results", "designed");
    into.b = frameId(home, "push", "Implement", "--criteria", "Code exists");
    flame(home, "focus", into.root);
    into.plans = ["Plan one", "Plan two", "Plan three"].map((title) =>
      frameId(home, "plan", title, "--criteria", "Done", "--parent", into.root),
    );
    return home;
  };
}

describe("the flame graph", () => {
  it("focuses the frame clicked on the canvas", async () => {
    const tree = {} as Tree;
    await withApp(
      "click focuses",
      async (app) => {
        await app.find("[data-testid=flame-canvas]");
        expect(status(app.home).focus).toBe(tree.root);
        await click(app.driver, point(await rectOf(app.driver, tree.a), 0.5));
        await eventually(app, () => status(app.home).focus === tree.a, "the click focused Design");
        const header = await app.find("[data-testid=focused-frame]");
        await app.driver.wait(
          async () => (await header.getAttribute("data-frame-id")) === tree.a,
          3_000,
        );
        expect(await header.getAttribute("textContent")).toContain("Design");
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("reorders planned siblings and re-parents a plan by dragging", async () => {
    const tree = {} as Tree;
    await withApp(
      "drag reorders and re-parents",
      async (app) => {
        await app.find("[data-testid=flame-canvas]");
        const [one, two, three] = tree.plans as [string, string, string];
        // "Plan three" dropped on the left quarter of "Plan one" goes before it.
        await drag(
          app.driver,
          point(await rectOf(app.driver, three), 0.5),
          point(await rectOf(app.driver, one), 0.1),
        );
        await eventually(
          app,
          () =>
            childTitles(app.home, tree.root).join() ===
            "Design,Implement,Plan three,Plan one,Plan two",
          "Plan three moved before Plan one",
        );
        // "Plan two" dropped on the middle of "Plan one" becomes its child.
        await app.driver.wait(
          async () => (await rectOf(app.driver, three)).x < (await rectOf(app.driver, one)).x,
          3_000,
        );
        await drag(
          app.driver,
          point(await rectOf(app.driver, two), 0.5),
          point(await rectOf(app.driver, one), 0.5),
        );
        await eventually(
          app,
          () => childTitles(app.home, one).join() === "Plan two",
          "Plan two moved under Plan one",
        );
        expect(status(app.home).frames.find((f) => f.id === two)?.parent).toBe(one);
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("shows why a drop is refused and changes nothing", async () => {
    const tree = {} as Tree;
    await withApp(
      "refused drop",
      async (app) => {
        await app.find("[data-testid=flame-canvas]");
        const before = JSON.stringify(status(app.home));
        // A completed frame takes no new children.
        await drag(
          app.driver,
          point(await rectOf(app.driver, tree.plans[0]!), 0.5),
          point(await rectOf(app.driver, tree.a), 0.5),
        );
        const notice = await app.find("[data-testid=operation-error]");
        expect(await notice.getAttribute("data-code")).toBe("refused");
        expect(await notice.getText()).toContain("completed");
        expect(JSON.stringify(status(app.home))).toBe(before);
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("shows a frame pushed by the command line in another process, keeping the zoom", async () => {
    const tree = {} as Tree;
    await withApp(
      "live update",
      async (app) => {
        await app.find("[data-testid=flame-canvas]");
        const b = await rectOf(app.driver, tree.b);
        await app.driver
          .actions({ async: true })
          .move({ ...point(b, 0.5), origin: Origin.VIEWPORT })
          .doubleClick()
          .perform();
        await app.driver.wait(
          async () => (await rectOf(app.driver, tree.b)).width > b.width * 1.5,
          3_000,
          "zoomed into Implement",
        );
        const zoomed = await rectOf(app.driver, tree.b);

        const started = Date.now();
        const pushed = frameId(
          app.home,
          "push",
          "Wire it up",
          "--criteria",
          "Wired",
          "--parent",
          tree.b,
        );
        // The accessible mirror is not visible on screen, so wait for it to exist, not to show.
        await app.driver.wait(until.elementLocated(By.css(`[data-frame-id="${pushed}"]`)), 5_000);
        const took = Date.now() - started;
        const drawn = await rectOf(app.driver, pushed);
        expect(drawn.width).toBeGreaterThan(0);
        // The view stayed where it was: Implement still fills the zoomed width.
        expect(Math.abs((await rectOf(app.driver, tree.b)).width - zoomed.width)).toBeLessThan(2);
        console.warn(`a frame pushed from another process appeared after ${took} ms`);
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("offers to create a tree when there is none, and draws it", async () => {
    await withApp("empty state", async (app) => {
      // A new data directory starts with the sample tree; deleting it leaves none.
      await (await app.find("[data-testid=delete-tree-button]")).click();
      await (await app.find("[data-testid=delete-tree-dialog] button[type=submit]")).click();
      const form = await app.find("[data-testid=new-tree-form]");
      await (await form.findElement({ css: "input[name=title]" })).sendKeys("Write the book");
      await (await form.findElement({ css: "textarea[name=criteria]" })).sendKeys("Ten chapters");
      await (await form.findElement({ css: "button[type=submit]" })).click();
      await app.find("[data-testid=flame-canvas]");
      const root = status(app.home).focus;
      expect((await rectOf(app.driver, root)).width).toBeGreaterThan(100);
    });
  });
});
