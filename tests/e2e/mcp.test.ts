// MCP servers in the real window: Settings lists the settings' servers with where each stands,
// "Add from other agents…" shows the servers the tree's workspace `.mcp.json` names (the
// published server-everything, installed by `npm ci`) and adds the one picked, the save keeps
// it; then the scripted model calls the scripted server's tool, the window asks first (its
// server, tool and arguments), the call runs once allowed and its result is shown and stored,
// and the context inspector says which servers the frame is offered tools from, and how many.

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { flame } from "./flame-cli";
import { type App, keepScreenshot, textOf, withApp } from "./harness";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");
const EVERYTHING = join(REPO, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const SCRIPTED = join(REPO, "crates/flame-mcp-client/tests/client/scripted-server.js");

const model = new FakeModel({ pieces: ["Done."] });

beforeAll(() => model.start());
afterAll(() => model.stop());

/** The text of every element `css` matches, in order. */
async function texts(app: App, css: string): Promise<string[]> {
  const found = await app.driver.findElements(By.css(css));
  return Promise.all(found.map((e) => e.getText()));
}

async function waitFor(app: App, what: string, check: () => Promise<boolean>): Promise<void> {
  await app.driver.wait(check, 20_000, what);
}

describe("MCP servers", () => {
  it("are listed and added in Settings, asked about before a call, and shown in the inspector", async () => {
    if (!existsSync(EVERYTHING)) {
      console.warn("skipped: @modelcontextprotocol/server-everything is not installed (npm ci)");
      return;
    }
    model.answer(
      {
        pieces: ["Echoing it."],
        tool: { name: "scripted__echo", arguments: { message: "from the window" } },
      },
      { pieces: ["It echoed."] },
    );
    const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-mcp-"));
    const [home, work] = [join(scratch, "home"), join(scratch, "work")];
    await mkdir(home);
    await mkdir(work);
    await writeFile(
      join(work, ".mcp.json"),
      JSON.stringify({
        mcpServers: { everything: { command: "node", args: [EVERYTHING, "stdio"] } },
      }),
    );
    flame(home, "tree", "new", "Use the servers", "--criteria", "echoed", "--workspace", work);
    const scripted = {
      name: "scripted",
      transport: { kind: "stdio", command: "node", args: [SCRIPTED, "well"], env: {} },
      approval: "ask",
    };
    try {
      await withApp(
        "mcp servers",
        async (app) => {
          await (await app.find("[data-testid=settings-button]")).click();
          await app.find("[data-testid=settings-mcp]");
          await waitFor(app, "the scripted server listed with where it stands", async () =>
            (await texts(app, "[data-testid=mcp-server-list] li")).some(
              (t) => t.includes("scripted") && t.includes("starts when the agent first needs it"),
            ),
          );
          await (await app.find("[data-testid=mcp-add-from]")).click();
          const found = await app.find("[data-testid=mcp-found] li[data-name=everything]");
          expect(await found.getText()).toContain(join(work, ".mcp.json"));
          await (await found.findElement(By.css("input[type=checkbox]"))).click();
          await (await app.find("[data-testid=mcp-found-add]")).click();
          await app.find("[data-testid=mcp-server-list] li[data-name=everything]");
          await keepScreenshot(app, "mcp-settings");
          await (await app.find("[data-testid=settings-dialog] button[type=submit]")).click();
          await waitFor(
            app,
            "the settings saved",
            async () =>
              (await app.driver.findElements(By.css("[data-testid=settings-dialog]"))).length === 0,
          );
          const saved = JSON.parse(
            await readFile(join(scratch, "config/flame/settings.json"), "utf8"),
          ) as { mcp_servers: { name: string }[] };
          expect(saved.mcp_servers.map((s) => s.name)).toEqual(["scripted", "everything"]);

          const box = await app.find("[data-testid=composer] textarea");
          await box.sendKeys("Echo something", Key.ENTER);
          const approval = await app.find("[data-testid=approval][data-ask=mcp]");
          expect(await approval.getText()).toContain(
            "The agent asks to call echo of the MCP server scripted with:",
          );
          expect(await textOf(app, "[data-testid=approval-mcp-arguments]")).toContain(
            '"message": "from the window"',
          );
          await keepScreenshot(app, "mcp-approval");
          await (await approval.findElement(By.css("[data-testid=approval-allow]"))).click();
          await waitFor(app, "the call's result and the model's answer", async () =>
            (await texts(app, "[data-testid=message]")).some((t) => t.includes("It echoed.")),
          );
          const shown = (await texts(app, "[data-testid=message]")).join("\n");
          expect(shown).toContain('echo: {"message":"from the window"}');

          await (await app.find("[data-testid=inspector-toggle]")).click();
          await waitFor(app, "the inspector's MCP servers", async () => {
            const lines = await texts(app, "[data-testid=context-mcp] li");
            return (
              lines.some((l) => l.startsWith("scripted: 4 tools offered, calls ask first")) &&
              lines.some((l) => /^everything: \d+ tools offered/.test(l))
            );
          });
          await app.driver.executeScript(
            "document.querySelector('[data-testid=context-mcp]').scrollIntoView({block: 'center'})",
          );
          await keepScreenshot(app, "mcp-inspector");
        },
        {
          prepareHome: () => Promise.resolve(home),
          // The settings in scratch/config, where the test reads them back.
          env: () => model.settingsEnv(scratch, [], { mcp_servers: [scripted] }),
        },
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
