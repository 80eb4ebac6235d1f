// Long results in the real window: a shared Claude Code session is imported with the `flame`
// command line, and its "Explore transcript rendering codebase" frame — a subagent whose report,
// its results, runs to some 16,000 characters, asked for with criteria of a dozen lines — is
// focused. The header shows the first lines with Show all, so the frame's conversation (and the
// context inspector, when opened) starts within the chat pane's visible area; Show all reveals
// the end of the report while the conversation keeps its place in view.

import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { flame, status } from "./flame-cli";
import { keepScreenshot, textOf, withApp, type App } from "./harness";

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/claude-code");
const SESSION = join(FIXTURES, "4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
const TITLE = "Explore transcript rendering codebase";

interface Imported {
  frame: string;
  /** The frame's whole results, as the store holds them. */
  results: string;
}

interface Box {
  top: number;
  bottom: number;
}

/** Where `css`'s first match is on screen, in viewport pixels; null when nothing matches. */
async function boxOf(app: App, css: string): Promise<Box | null> {
  return app.driver.executeScript<Box | null>(
    `const found = document.querySelector(arguments[0]);
     if (found === null) return null;
     const rect = found.getBoundingClientRect();
     return { top: rect.top, bottom: rect.bottom };`,
    css,
  );
}

/** Checks that `css` starts inside the chat pane, at least `room` pixels above its bottom. */
async function startsInPane(app: App, css: string, room: number) {
  const pane = await boxOf(app, "[data-testid=chat-pane]");
  const box = await boxOf(app, css);
  expect(pane).not.toBeNull();
  expect(box, css).not.toBeNull();
  expect(box!.top, css).toBeGreaterThanOrEqual(pane!.top);
  expect(box!.top, css).toBeLessThanOrEqual(pane!.bottom - room);
}

/**
 * Checks that the conversation starts inside the chat pane, at least `room` pixels above its
 * bottom, and that at least `seen` pixels of a message are in sight in it. (The pane scrolls the
 * conversation to its newest message, so which message is in sight is not checked.)
 */
async function conversationInView(app: App, room: number, seen: number) {
  await startsInPane(app, "[data-testid=messages]", room);
  const visible = await app.driver.executeScript<number>(
    `const list = document.querySelector("[data-testid=messages]").getBoundingClientRect();
     const pane = document.querySelector("[data-testid=chat-pane]").getBoundingClientRect();
     const top = Math.max(list.top, pane.top);
     const bottom = Math.min(list.bottom, pane.bottom);
     let most = 0;
     for (const message of document.querySelectorAll("[data-testid=messages] .message")) {
       const rect = message.getBoundingClientRect();
       most = Math.max(most, Math.min(rect.bottom, bottom) - Math.max(rect.top, top));
     }
     return most;`,
  );
  expect(visible, "pixels of a message in sight").toBeGreaterThanOrEqual(seen);
}

describe("long results", () => {
  it("do not bury the conversation, and Show all reveals them whole", async () => {
    const imported = {} as Imported;
    await withApp(
      "long results",
      async (app) => {
        await app.find(`[data-testid=focused-frame][data-frame-id="${imported.frame}"]`);
        const results = await app.find("[data-testid=frame-results]");
        expect(await results.getAttribute("data-shown")).toBe("head");
        const lastLine = imported.results.trim().split("\n").pop()!.trim();
        expect(await textOf(app, "[data-testid=frame-results]")).not.toContain(lastLine);
        expect(await app.find("[data-testid=criteria-toggle]")).toBeTruthy();

        // The conversation starts in view, with room to read it.
        await app.find("[data-testid=messages] .message");
        await conversationInView(app, 300, 250);
        await keepScreenshot(app, "long-results");

        // So does the context inspector, with the conversation still below it.
        await (await app.find("[data-testid=inspector-toggle]")).click();
        await app.find("[data-testid=context-summary]");
        await startsInPane(app, "[data-testid=context-inspector]", 200);
        await conversationInView(app, 60, 40);
        await keepScreenshot(app, "long-results-inspector");
        await (await app.find("[data-testid=inspector-toggle]")).click();
        await app.driver.wait(
          async () =>
            (await app.driver.findElements(By.css("[data-testid=context-inspector]"))).length === 0,
          5_000,
          "the inspector closed",
        );

        // Show all: the whole report, its last line included; the header scrolls within its
        // share of the pane, and the conversation keeps the rest.
        await (await app.find("[data-testid=results-toggle]")).click();
        await app.driver.wait(
          async () => (await results.getAttribute("data-shown")) === "all",
          5_000,
          "the results shown whole",
        );
        expect(await textOf(app, "[data-testid=frame-results]")).toContain(lastLine);
        await conversationInView(app, 300, 250);
        const end = await app.driver.findElement(By.css("[data-testid=results-toggle-end]"));
        await app.driver.executeScript("arguments[0].scrollIntoView()", end);
        await keepScreenshot(app, "long-results-all");

        // Show less at the end goes back to the first lines.
        await end.click();
        await app.driver.wait(
          async () => (await results.getAttribute("data-shown")) === "head",
          5_000,
          "the results short again",
        );
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "import", SESSION);
          const frame = status(home).frames.find((f) => f.title === TITLE);
          if (frame === undefined) throw new Error(`no frame titled ${TITLE}`);
          imported.frame = frame.id;
          const exported = flame(home, "export", frame.id, "--scope", "frame") as {
            frames: { id: string; results: string | null }[];
          };
          imported.results = exported.frames.find((f) => f.id === frame.id)?.results ?? "";
          expect(imported.results.length).toBeGreaterThan(10_000);
          flame(home, "focus", frame.id);
          return home;
        },
      },
    );
  });
});
