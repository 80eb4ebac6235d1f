// The search over every tree in the real window, driven with the real keyboard: with another
// tree on screen, Ctrl+K, a word said early in a long conversation, and Enter switch to the
// tree it was said in, focus its frame (which the store then says is the focus) and bring the
// message into view in the chat pane. The trees are built with the `flame` command line.

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { Key } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { flame, status } from "./flame-cli";
import { keepScreenshot, textOf, withApp } from "./harness";

interface Built {
  design: string;
  message: number;
}

/** How many messages "Design" holds: more than the newest page a view of it reads (200), so the
 * message searched for is read only when it is asked for. */
const DESIGN_MESSAGES = 300;

/** A message of the export, said by the person. */
function said(content: string, at: number) {
  return {
    role: "user",
    content,
    tool_calls: null,
    tool_result: null,
    model: null,
    usage: null,
    tokens: 20,
    created_at: at,
    interrupted: false,
  };
}

/** A frame of the export, in progress. */
function inProgress(id: string, parent: string | null, title: string, messages: unknown[]) {
  return {
    id,
    parent,
    position: 0,
    title,
    success_criteria: "It works",
    success_criteria_compacted: null,
    status: "in_progress",
    status_reason: null,
    results: null,
    results_compacted: null,
    artifacts: [],
    decisions: [],
    retry_of: null,
    created_at: 1_700_000_000_000,
    started_at: 1_700_000_000_000,
    ended_at: null,
    messages,
  };
}

/** "Build the app" › "Design" holds `DESIGN_MESSAGES` messages, the third with the word searched
 * for (imported from a Flame export: appending them one by one takes too long); a second tree,
 * "Write the docs", is current when the window opens. */
function treesHome(into: Built) {
  return async (scratch: string) => {
    const home = join(scratch, "home");
    await mkdir(home);
    const messages = Array.from({ length: DESIGN_MESSAGES }, (_, i) =>
      said(
        i === 2
          ? "Cache the outline with a kestrel-shaped eviction policy"
          : `Message ${i} about the layout of the two panes, long enough to take some room.`,
        1_700_000_000_000 + i,
      ),
    );
    const file = join(scratch, "build.json");
    await writeFile(
      file,
      JSON.stringify({
        format: "flame-export",
        version: 2,
        tree: { title: "Build the app", created_at: 1_700_000_000_000, focus: "fbuild" },
        frames: [
          inProgress("fbuild", null, "Build the app", []),
          inProgress("fdesign", "fbuild", "Design", messages),
        ],
      }),
    );
    flame(home, "import", file);
    const frames = status(home).frames;
    into.design = frames.find((f) => f.title === "Design")!.id;
    const hits = flame(home, "search", "kestrel") as { place: { id: number } }[];
    into.message = hits[0]!.place.id;
    flame(home, "tree", "new", "Write the docs", "--criteria", "Docs exist");
    return home;
  };
}

describe("the search", () => {
  it("finds a word in another tree and shows the message in its frame", async () => {
    const built = {} as Built;
    await withApp(
      "search",
      async (app) => {
        await app.find("[data-testid=focused-frame]");
        expect(await textOf(app, "[data-testid=focused-frame]")).toContain("Write the docs");

        const active = await app.driver.switchTo().activeElement();
        await active.sendKeys(Key.chord(Key.CONTROL, "k"));
        const query = await app.find("[data-testid=search-query]");
        await query.sendKeys("kestrel");
        const hit = await app.find(
          `[data-testid=search-hits] li[data-message-id="${built.message}"][aria-selected=true]`,
        );
        expect(await hit.getText()).toContain("Build the app › Design");
        expect(await textOf(app, "[data-testid=search-hits] .search-match")).toBe("kestrel");
        await keepScreenshot(app, "search");
        await query.sendKeys(Key.ENTER);

        await app.find(`[data-testid=focused-frame][data-frame-id="${built.design}"]`);
        const message = `[data-testid=messages] [data-message-id="${built.message}"]`;
        await app.find(message);
        // The pane scrolls to its end as the conversation loads; the message is brought back
        // into the visible part of the list.
        await app.driver.wait(
          () =>
            app.driver.executeScript<boolean>(
              `const list = document.querySelector("[data-testid=messages]");
               const item = document.querySelector('${message}');
               if (!list || !item) return false;
               const box = list.getBoundingClientRect(), rect = item.getBoundingClientRect();
               return list.scrollTop + list.clientHeight < list.scrollHeight - 1 &&
                 rect.top >= box.top - 1 && rect.bottom <= box.bottom + 1;`,
            ),
          5_000,
          "the message in view, above the end of the conversation",
        );
        await keepScreenshot(app, "search-revealed");
        expect(status(app.home).focus).toBe(built.design);
      },
      { prepareHome: treesHome(built) },
    );
  });
});
