// A message sent from the composer and answered by a model, in the real window: the reply
// streams through the Tauri channel and is stored. The model is a small OpenAI-compatible
// server in this test (Flame's settings point at it through XDG_CONFIG_HOME), so nothing leaves
// the machine and crates/ are not involved.

import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { flame } from "./flame-cli";
import { type App, withApp } from "./harness";

const PIECES = ["Hello", " from the", " model: ", '<img src=x onerror="document.title=1">'];

/** What the fake model received. */
const requests: { model: string; system: string; last: string }[] = [];
let server: Server;
let port = 0;

function chunk(delta: Record<string, string>, finish: string | null): string {
  const body = {
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: 0,
    model: "gpt-4o",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (part: Buffer) => (body += part.toString()));
    request.on("end", () => {
      const parsed = JSON.parse(body) as { model: string; messages: { role: string; content: unknown }[] };
      const text = (m: { content: unknown } | undefined) =>
        typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
      requests.push({
        model: parsed.model,
        system: text(parsed.messages.find((m) => m.role === "system")),
        last: text(parsed.messages[parsed.messages.length - 1]),
      });
      response.writeHead(200, { "content-type": "text/event-stream" });
      // Slow pieces, so the window shows the reply while it streams.
      const pieces = [chunk({ role: "assistant", content: "" }, null), ...PIECES.map((p) => chunk({ content: p }, null))];
      pieces.push(chunk({}, "stop"), "data: [DONE]\n\n");
      let next = 0;
      const timer = setInterval(() => {
        const piece = pieces[next++];
        if (piece === undefined) {
          clearInterval(timer);
          response.end();
        } else {
          response.write(piece);
        }
      }, 250);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Flame's settings (read through XDG_CONFIG_HOME) pointing at the fake model, with `models` listed. */
function fakeModelSettings(models: object[] = []) {
  return async (scratch: string) => {
    const config = join(scratch, "config");
    await mkdir(join(config, "flame"), { recursive: true });
    const settings = {
      default_model: "gpt-4o",
      openai: { base_url: `http://127.0.0.1:${port}/v1`, api_key: "sk-e2e-not-a-real-key" },
      models,
    };
    await writeFile(join(config, "flame/settings.json"), JSON.stringify(settings));
    return { XDG_CONFIG_HOME: config, OPENAI_API_KEY: "" };
  };
}

/** Waits until the reply is stored: no longer marked interrupted, the draft gone. */
async function replyStored(app: App) {
  await app.driver.wait(
    async () =>
      (await app.driver.findElements(By.css("[data-testid=streaming-reply], .interrupted"))).length === 0 &&
      (await app.driver.findElements(By.css("[data-testid=message][data-role=assistant]"))).length === 1,
    15_000,
    "the reply is stored",
  );
}

describe("chatting with a model", () => {
  it("streams the reply into the pane, stores it, and shows its markup as text", async () => {
    let root = "";
    await withApp(
      "model chat",
      async (app) => {
        const box = await app.find("[data-testid=composer] textarea");
        const titleBefore = await app.driver.getTitle();
        await box.sendKeys("hello from the window", Key.ENTER);
        const streaming = await app.find("[data-testid=streaming-reply]");
        await app.find("[data-testid=stop-button]");
        await app.driver.wait(
          async () => (await streaming.getText()).includes("Hello"),
          10_000,
          "the reply streams in",
        );
        // The reply is stored as it streams; it is complete when it is no longer marked
        // interrupted and the draft is gone.
        await replyStored(app);
        const reply = await app.find("[data-testid=message][data-role=assistant]");
        expect(await reply.getText()).toContain(PIECES.join(""));
        expect(await app.driver.findElements(By.css("[data-testid=messages] img"))).toHaveLength(0);
        expect(await app.driver.getTitle()).toBe(titleBefore);
        expect(requests.at(-1)?.last).toContain("hello from the window");
        expect(requests.at(-1)?.system).toContain("<stack-context");
        const stored = flame(app.home, "log", root);
        expect(JSON.stringify(stored)).toContain("Hello from the model");
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          root = (flame(home, "tree", "new", "Say hello", "--criteria", "It said hello") as { root: string }).root;
          return home;
        },
        env: fakeModelSettings(),
      },
    );
  });

  it("lists the configured models in the composer and sends with the one picked", async () => {
    await withApp(
      "model picker",
      async (app) => {
        const picker = await app.find("[data-testid=model-picker]");
        const options = await picker.findElements(By.css("option"));
        expect(await Promise.all(options.map((o) => o.getAttribute("value")))).toEqual([
          "gpt-4o",
          "llama3.1:8b",
        ]);
        expect(await picker.getAttribute("value")).toBe("gpt-4o");
        await options[1]?.click();
        expect(await picker.getAttribute("value")).toBe("llama3.1:8b");
        const box = await app.find("[data-testid=composer] textarea");
        await box.sendKeys("which model are you?", Key.ENTER);
        await replyStored(app);
        expect(requests.at(-1)?.last).toContain("which model are you?");
        expect(requests.at(-1)?.model).toBe("llama3.1:8b");
        // The stored reply names the model that wrote it.
        const reply = await app.find("[data-testid=message][data-role=assistant] .message-meta");
        expect(await reply.getText()).toContain("llama3.1:8b");
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "tree", "new", "Pick a model", "--criteria", "The picked model answered");
          return home;
        },
        env: fakeModelSettings([
          { name: "llama3.1:8b", provider: "openai", context_window: 131072, max_output_tokens: 4096 },
        ]),
      },
    );
  });
});
