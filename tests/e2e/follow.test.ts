// Following other agents' sessions from the window: the Sessions view lists them, Follow makes a
// tree of one that the window keeps in step with what the agent writes — the chat shows a new
// line, the graph grows a frame — and the real OpenCode CLI writing its database while the window
// follows it. The OpenCode test skips, and says so, where the CLI is not installed
// (`make agents` installs it under target/agents; $FLAME_OPENCODE names another).

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { By } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { status } from "./flame-cli";
import { keepScreenshot, withApp, type App } from "./harness";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The OpenCode CLI to run: $FLAME_OPENCODE, else `make agents`' copy, else one on the PATH. */
function opencodeBinary(): string | null {
  const candidates = [
    process.env["FLAME_OPENCODE"],
    join(REPO, "target/agents/node_modules/.bin/opencode"),
  ];
  for (const candidate of candidates) {
    if (candidate !== undefined && existsSync(candidate)) return candidate;
  }
  const found = spawnSync("sh", ["-c", "command -v opencode"], { encoding: "utf8" });
  return found.status === 0 && found.stdout.trim() !== "" ? found.stdout.trim() : null;
}

const OPENCODE = opencodeBinary();
if (OPENCODE === null) {
  console.warn(
    "skipped: the OpenCode CLI is not installed (make agents, or set FLAME_OPENCODE), so the test that follows it is skipped",
  );
}

/** A Claude Code record line. */
function record(kind: "user" | "assistant", n: number, text: string): string {
  const timestamp = `2026-11-26T10:00:${String(n).padStart(2, "0")}.000Z`;
  const message =
    kind === "user"
      ? { role: "user", content: text }
      : {
          id: `m${n}`,
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text }],
          usage: { input_tokens: 3, cache_read_input_tokens: 2000, output_tokens: 20 },
        };
  return `${JSON.stringify({ type: kind, sessionId: "e2e-session", cwd: "/work/demo", timestamp, message })}\n`;
}

async function treeItems(app: App): Promise<number> {
  return (await app.driver.findElements(By.css("[role=treeitem]"))).length;
}

async function followFromTheSessionsView(app: App, id: string): Promise<void> {
  await (await app.find("[data-testid=sessions-button]")).click();
  const row = await app.find(`[data-session-id="${id}"]`);
  await keepScreenshot(app, "sessions-view");
  await (await row.findElement(By.css("[data-testid=follow-session]"))).click();
  await app.driver.wait(
    async () =>
      (
        await app.driver.findElements(
          By.css(`[data-session-id="${id}"] [data-testid=open-session]`),
        )
      ).length === 1,
    20_000,
    "the session followed, with a tree to open",
  );
  await (await app.find(`[data-session-id="${id}"] [data-testid=open-session]`)).click();
}

describe("following other agents' sessions", () => {
  it("follows a Claude Code session from the Sessions view and keeps its tree in step", async () => {
    await withApp(
      "follows a Claude Code session",
      async (app) => {
        const file = join(app.home, "..", "claude/projects/-work-demo/e2e-session.jsonl");
        await followFromTheSessionsView(app, "claude-code:e2e-session");
        await app.driver.wait(async () => (await treeItems(app)) === 2, 10_000, "root and segment");
        // A line the agent writes reaches the followed frame's chat.
        await appendFile(file, record("assistant", 2, "A line written while the window follows"));
        await app.driver.wait(
          async () =>
            (
              await app.driver.findElements(
                By.xpath("//*[contains(text(), 'A line written while the window follows')]"),
              )
            ).length > 0,
          10_000,
          "the new line in the chat",
        );
        // A new request is a new segment: the graph grows.
        await appendFile(file, record("user", 3, "Now the second part"));
        await appendFile(file, record("assistant", 4, "Doing the second part"));
        await app.driver.wait(async () => (await treeItems(app)) === 3, 10_000, "a third frame");
        const stored = status(app.home);
        expect(stored.frames.map((f) => f.title)).toContain("Now the second part");
      },
      {
        env: async (scratch) => {
          const project = join(scratch, "claude/projects/-work-demo");
          await mkdir(project, { recursive: true });
          await writeFile(
            join(project, "e2e-session.jsonl"),
            record("user", 0, "Build the demo") + record("assistant", 1, "Starting on the demo"),
          );
          return {
            CLAUDE_CONFIG_DIR: join(scratch, "claude"),
            CODEX_HOME: join(scratch, "codex"),
            XDG_DATA_HOME: join(scratch, "xdg-data"),
          };
        },
      },
    );
  });

  it.skipIf(OPENCODE === null)(
    "follows a session while the real OpenCode CLI writes it, and the tree grows in the window",
    async () => {
      const model = new FakeModel({ pieces: ["Done: ", "noted."] });
      await model.start();
      try {
        let scratchDir = "";
        // Run without blocking: the scripted model answers from this same process.
        const run = async (prompt: string, ...more: string[]) => {
          const folder = join(scratchDir, "project");
          const env: Record<string, string> = {
            PATH: process.env["PATH"] ?? "",
            HOME: join(scratchDir, "oc-home"),
            PWD: folder,
            XDG_CONFIG_HOME: join(scratchDir, "oc-config"),
            XDG_DATA_HOME: join(scratchDir, "xdg-data"),
            XDG_CACHE_HOME: join(scratchDir, "oc-cache"),
            XDG_STATE_HOME: join(scratchDir, "oc-state"),
            OPENCODE_CONFIG: join(scratchDir, "opencode.json"),
            OPENCODE_DISABLE_MODELS_FETCH: "1",
            OPENCODE_DISABLE_AUTOUPDATE: "1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
            OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          };
          // Standard input is closed: `opencode run` reads more of the request from it otherwise.
          const child = spawn(OPENCODE as string, ["run", ...more, prompt], {
            cwd: folder,
            env,
            stdio: ["ignore", "ignore", "pipe"],
            timeout: 120_000,
          });
          let errors = "";
          child.stderr.on("data", (part: Buffer) => (errors += part.toString()));
          await new Promise<void>((resolveRun, reject) =>
            child.once("exit", (code) =>
              code === 0
                ? resolveRun()
                : reject(new Error(`opencode run exited ${code}: ${errors}`)),
            ),
          );
        };
        await withApp(
          "follows the real OpenCode CLI",
          async (app) => {
            const list = JSON.parse(
              execFileSync(
                join(REPO, "target/debug/flame"),
                ["--json", "sessions", "--agent", "opencode"],
                {
                  encoding: "utf8",
                  env: {
                    ...process.env,
                    FLAME_HOME: app.home,
                    XDG_DATA_HOME: join(scratchDir, "xdg-data"),
                  },
                },
              ),
            ) as { sessions: { id: string }[] };
            expect(list.sessions).toHaveLength(1);
            const id = list.sessions[0]?.id ?? "";
            await followFromTheSessionsView(app, id);
            await app.driver.wait(
              async () => (await treeItems(app)) === 2,
              20_000,
              "root and one segment",
            );
            // OpenCode answers a second request in the same session while the window follows.
            await run("Now write the second part", "--continue");
            await app.driver.wait(
              async () => (await treeItems(app)) === 3,
              30_000,
              "a second segment",
            );
            const titles = status(app.home).frames.map((f) => f.title);
            expect(titles.some((t) => t.includes("Now write the second part"))).toBe(true);
          },
          {
            env: async (scratch) => {
              scratchDir = scratch;
              for (const d of [
                "project",
                "oc-home",
                "oc-config",
                "xdg-data",
                "oc-cache",
                "oc-state",
              ]) {
                await mkdir(join(scratch, d), { recursive: true });
              }
              await writeFile(
                join(scratch, "opencode.json"),
                JSON.stringify({
                  model: "scripted/gpt-4.1-mini",
                  small_model: "scripted/gpt-4.1-mini",
                  autoupdate: false,
                  share: "disabled",
                  provider: {
                    scripted: {
                      npm: "@ai-sdk/openai-compatible",
                      name: "Scripted",
                      options: { baseURL: model.baseUrl(), apiKey: "none" },
                      models: { "gpt-4.1-mini": { name: "gpt-4.1-mini" } },
                    },
                  },
                }),
              );
              // The session exists before the window opens: OpenCode wrote its first request.
              await run("Write the first part");
              return {
                XDG_DATA_HOME: join(scratch, "xdg-data"),
                CLAUDE_CONFIG_DIR: join(scratch, "claude"),
                CODEX_HOME: join(scratch, "codex"),
              };
            },
          },
        );
      } finally {
        await model.stop();
      }
    },
    240_000,
  );
});
