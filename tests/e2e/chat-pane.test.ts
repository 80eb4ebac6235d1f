// The chat pane in the real window: the context inspector's sections, hostile messages shown as
// text, and a slash command typed with the real keyboard. Trees are built and read back with the
// `flame` command line. Sending to a model is not tested here: that needs a model server, and the
// chat loop is tested in Rust against the replay server.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { flame, frameId, status } from "./flame-cli";
import { withApp } from "./harness";

const IMG_PAYLOAD = '<img src=x onerror="document.title=1">';
const SCRIPT_PAYLOAD =
  "<script>document.title='2'</script> and [run](javascript:document.title='3')";

interface Tree {
  root: string;
  design: string;
  implement: string;
}

/** Root › Design (completed) and Implement (in progress, focused, with a short conversation). */
function treeHome(into: Tree) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    into.root = (
      flame(home, "tree", "new", "Build the app", "--criteria", "It works") as { root: string }
    ).root;
    into.design = frameId(home, "push", "Design", "--criteria", "A plan exists");
    flame(home, "append", into.design, "--role", "user", "Sketch the screens");
    flame(home, "pop", "--status", "completed", "--results", "Two panes: graph and chat");
    into.implement = frameId(home, "push", "Implement", "--criteria", "Code exists");
    flame(home, "append", into.implement, "--role", "user", "Write the **chat pane**");
    flame(
      home,
      "append",
      into.implement,
      "--role",
      "assistant",
      "Done:\n\n- `chat-pane.tsx`\n- tests",
    );
    return home;
  };
}

describe("the chat pane", () => {
  it("opens the context inspector for the focused frame and shows its sections", async () => {
    const tree = {} as Tree;
    await withApp(
      "inspector shows sections",
      async (app) => {
        await app.find(`[data-testid=focused-frame][data-frame-id="${tree.implement}"]`);
        await (await app.find("[data-testid=inspector-toggle]")).click();
        const summary = await app.find("[data-testid=context-summary]");
        expect(await summary.getText()).toMatch(
          /Flame sends .+ tokens of a .+ budget; a linear chat would send/,
        );
        const rows = await app.driver.findElements(By.css("[data-testid=context-sections] tr"));
        const kinds = await Promise.all(rows.map((row) => row.getAttribute("data-kind")));
        expect(kinds).toContain("preamble");
        expect(kinds).toContain("ancestor");
        expect(kinds).toContain("sibling");
        expect(kinds).toContain("history");
        const stripes = await app.driver.findElements(
          By.css("[data-testid=token-bar] [data-kind]"),
        );
        expect(stripes.length).toBeGreaterThan(1);
        // The system text is the preamble; the frame's place in the stack is its opening.
        const system = await app.find("[data-testid=context-system]");
        expect(await system.getText()).not.toContain("<stack-context id=");
        const opening = await app.find("[data-testid=context-opening-text]");
        const text = await opening.getText();
        expect(text).toContain("<stack-context id=");
        expect(text).toContain("Two panes: graph and chat");
        // Both are shown as text: the XML makes no elements.
        expect(
          await app.driver.findElements(
            By.css("[data-testid=context-system] *, [data-testid=context-opening-text] *"),
          ),
        ).toHaveLength(0);
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("shows hostile messages as text and runs nothing, including one appended while open", async () => {
    const tree = {} as Tree;
    await withApp(
      "hostile messages are text",
      async (app) => {
        await app.find("[data-testid=message][data-role=assistant]");
        const titleBefore = await app.driver.getTitle();
        flame(app.home, "append", tree.implement, "--role", "assistant", IMG_PAYLOAD);
        flame(app.home, "append", tree.implement, "--role", "assistant", SCRIPT_PAYLOAD);
        await app.driver.wait(
          async () => (await app.driver.findElements(By.css("[data-testid=message]"))).length === 4,
          5_000,
          "the appended messages appear",
        );
        const messages = await app.driver.findElements(By.css("[data-testid=message]"));
        expect(await messages[2]?.getText()).toContain(IMG_PAYLOAD);
        expect(await messages[3]?.getText()).toContain("<script>document.title='2'</script>");
        const planted = await app.driver.findElements(
          By.css(
            "[data-testid=messages] img, [data-testid=messages] script, [data-testid=messages] a",
          ),
        );
        expect(planted).toHaveLength(0);
        // Give an onerror handler, had one been made, time to run.
        await app.driver.sleep(300);
        expect(await app.driver.getTitle()).toBe(titleBefore);
        // The earlier, harmless Markdown did become elements.
        expect(await app.driver.findElements(By.css("[data-testid=message] li code"))).toHaveLength(
          1,
        );
      },
      { prepareHome: treeHome(tree) },
    );
  });

  it("pushes a frame with /push typed in the composer", async () => {
    const tree = {} as Tree;
    await withApp(
      "slash push",
      async (app) => {
        const box = await app.find("[data-testid=composer] textarea");
        await box.sendKeys("/pu");
        await app.find("[data-testid=completions]");
        await box.sendKeys("sh Wire the channel :: replies stream", Key.ENTER);
        await app.driver.wait(
          async () =>
            Promise.resolve(status(app.home).frames.some((f) => f.title === "Wire the channel")),
          5_000,
          "the pushed frame is in the store",
        );
        const pushed = status(app.home).frames.find((f) => f.title === "Wire the channel");
        expect(pushed?.parent).toBe(tree.implement);
        expect(status(app.home).focus).toBe(pushed?.id);
        await app.find(`[data-testid=focused-frame][data-frame-id="${pushed?.id}"]`);
      },
      { prepareHome: treeHome(tree) },
    );
  });
});
