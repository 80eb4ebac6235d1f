import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { flame, type Status } from "./flame-cli";
import { withApp } from "./harness";

describe("the Flame window", () => {
  it("shows the flame graph pane and the chat pane", async () => {
    await withApp("shows both panes", async (app) => {
      const graph = await app.find("[data-testid=graph-pane]");
      const chat = await app.find("[data-testid=chat-pane]");
      expect(await graph.getAttribute("aria-label")).toBe("Flame graph");
      expect(await chat.getAttribute("aria-label")).toBe("Chat");
      // The graph is on the left of the chat.
      const [g, c] = [await graph.getRect(), await chat.getRect()];
      expect(g.x + g.width).toBeLessThanOrEqual(c.x + 1);
      expect(g.width).toBeGreaterThan(200);
      expect(await app.driver.getTitle()).toBe("Flame");
    });
  });

  it("shows the data directory the backend opened, which is the one the test set", async () => {
    await withApp("round-trips the data directory", async (app) => {
      const shown = await (await app.find("[data-testid=data-dir]")).getText();
      expect(shown).toBe(app.home);
      // The backend really opened its database there, not just echoed a setting.
      expect(existsSync(join(app.home, "flame.db"))).toBe(true);
      expect(await (await app.find(".status-bar")).getText()).toContain("from FLAME_HOME");
    });
  });

  it("shows a clear error when the data directory is a file", async () => {
    let file = "";
    await withApp(
      "data directory is a file",
      async (app) => {
        const alert = await app.find("[data-testid=startup-error]");
        expect(await alert.getAttribute("data-code")).toBe("data_dir_unusable");
        const text = await alert.getText();
        expect(text).toContain("Flame cannot use its data directory");
        expect(text).toContain(file);
        expect(await readFile(file, "utf8")).toBe("not a folder");
      },
      {
        prepareHome: async (scratch) => {
          file = join(scratch, "a-file");
          await writeFile(file, "not a folder");
          return file;
        },
      },
    );
  });

  it("shows a clear error and keeps the file when the database is corrupt", async () => {
    const garbage = "this is somebody's file, not SQLite\n".repeat(100);
    await withApp(
      "corrupt database",
      async (app) => {
        const alert = await app.find("[data-testid=startup-error]");
        expect(await alert.getAttribute("data-code")).toBe("database_unreadable");
        expect(await alert.getText()).toContain("is not a Flame database");
        expect(await readFile(join(app.home, "flame.db"), "utf8")).toBe(garbage);
      },
      {
        prepareHome: async (scratch) => {
          await writeFile(join(scratch, "flame.db"), garbage);
          return scratch;
        },
      },
    );
  });

  it("refuses commands the window is not granted, and paths outside what a person exports to", async () => {
    await withApp("the IPC allowlist", async (app) => {
      await app.find("[data-testid=graph-pane]");
      // A script in the page calls the IPC directly, as injected code would.
      const call = (cmd: string, args: object): Promise<string> =>
        app.driver.executeAsyncScript<string>(
          `const done = arguments[arguments.length - 1];
           window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]).then(
             (value) => done("ok " + JSON.stringify(value)),
             (error) => done("refused " + JSON.stringify(error)));`,
          cmd,
          args,
        );
      // Declared but not granted: the window never updates partial results itself.
      expect(await call("update_results", { id: "f0000000000", results: "x" })).toMatch(
        /^refused .*not allowed/,
      );
      // A plugin's command is not granted either: dialogs are opened from Rust.
      expect(await call("plugin:dialog|save", { options: {} })).toMatch(/^refused .*not allowed/);
      // Granted, but the path is checked in Rust: no dotfile, no hidden folder.
      const status = flame(app.home, "status") as Status;
      const bashrc = await call("export_frames", {
        id: status.focus,
        scope: "frame",
        format: "markdown",
        path: join(app.home, ".bashrc"),
        progress: "__CHANNEL__:0",
      });
      expect(bashrc).toMatch(/^refused .*\.md file/);
      expect(existsSync(join(app.home, ".bashrc"))).toBe(false);
    });
  });
});
