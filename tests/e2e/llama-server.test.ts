// Chatting in the real window with a real model server: llama.cpp's own `llama-server` running a
// tiny model (../shared/peers/llama-server/start.sh), over both wire formats Flame speaks, OpenAI
// Chat Completions and Anthropic Messages. Nobody on the team wrote that server, so this catches
// what the scripted model of fake-model.ts cannot: a request a strict server refuses, or a stream
// shaped differently from what we imagined. It runs whenever ../shared/peers is present (it is in
// CI) and says plainly that it was skipped otherwise.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { flame } from "./flame-cli";
import { type App, freePort, keepScreenshot, withApp } from "./harness";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const START = resolve(REPO, "../shared/peers/llama-server/start.sh");
const PRESENT = existsSync(START);

/** The name start.sh serves the model under. */
const MODEL = "smollm2";

/**
 * A reply long enough to be watched as it streams, and short enough to take seconds: the model is
 * asked for a few sentences and may write no more than this.
 */
const MAX_OUTPUT_TOKENS = 160;

/** Prompt processing of Flame's system prompt and tools on two CPU cores takes tens of seconds. */
const REPLY_TIMEOUT = 150_000;

if (!PRESENT) {
  console.warn(`skipped: no llama-server (../shared/peers not found at ${START})`);
}

let server: { port: number; pid: number } | null = null;

beforeAll(async () => {
  if (!PRESENT) return;
  const port = await freePort();
  // start.sh prints "PORT PID" once the server answers; its first run downloads the model.
  const { stdout } = await promisify(execFile)(START, [String(port)], { timeout: 170_000 });
  const [printedPort, pid] = stdout.trim().split(/\s+/).map(Number);
  if (printedPort !== port || pid === undefined || !Number.isInteger(pid)) {
    throw new Error(`start.sh printed ${JSON.stringify(stdout)}, not "${port} PID"`);
  }
  server = { port, pid };
}, 180_000);

afterAll(() => {
  if (server !== null) process.kill(server.pid, "SIGTERM");
});

type Api = "openai" | "anthropic";

/** Writes settings naming the server's model over `api` and returns the app's environment. */
async function settingsEnv(scratch: string, api: Api): Promise<Record<string, string>> {
  if (server === null) throw new Error("llama-server is not running");
  const config = join(scratch, "config");
  await mkdir(join(config, "flame"), { recursive: true });
  const settings = {
    default_model: MODEL,
    turn_budget: { tool_calls: 2 },
    openai: { base_url: `http://127.0.0.1:${server.port}/v1` },
    // llama-server checks no key, but Flame will not speak Anthropic's format without one.
    anthropic: { base_url: `http://127.0.0.1:${server.port}`, api_key: "not-checked" },
    // The model's own context, which the server enforces.
    models: [
      { name: MODEL, provider: api, context_window: 8192, max_output_tokens: MAX_OUTPUT_TOKENS },
    ],
  };
  await writeFile(join(config, "flame/settings.json"), JSON.stringify(settings));
  return { XDG_CONFIG_HOME: config, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" };
}

interface ExportMessage {
  role: string;
  content: string;
  model: string | null;
  interrupted: boolean;
  tool_calls: unknown;
}

/** Every stored message of the tree, in every frame (the agent may have moved). */
function storedMessages(home: string, tree: string): ExportMessage[] {
  const exported = flame(home, "export", tree) as { frames: { messages: ExportMessage[] }[] };
  return exported.frames.flatMap((f) => f.messages);
}

/**
 * Records, from inside the page, every text the streaming reply shows as it grows (its header
 * aside), so a test sees the stream however fast it goes.
 */
const WATCH_DRAFTS = `
  window.__drafts = [];
  new MutationObserver(() => {
    const reply = document.querySelector("[data-testid=streaming-reply]");
    if (reply === null) return;
    const text = [...reply.children]
      .filter((child) => child.tagName !== "HEADER")
      .map((child) => child.innerText)
      .join("\\n")
      .trim();
    if (text !== "" && window.__drafts.at(-1) !== text) window.__drafts.push(text);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
`;

/** The words of a text, lower case, without punctuation or markup. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "");
}

async function count(app: App, css: string): Promise<number> {
  return (await app.driver.findElements(By.css(css))).length;
}

async function chatOver(api: Api): Promise<void> {
  let tree = "";
  await withApp(
    `llama-server ${api}`,
    async (app) => {
      const box = await app.find("[data-testid=composer] textarea");
      await app.driver.executeScript(WATCH_DRAFTS);
      const started = Date.now();
      await box.sendKeys("Write three short sentences about the sea.", Key.ENTER);
      await app.find("[data-testid=streaming-reply]");
      // Done when nothing streams and the reply is stored whole, or when the chat failed.
      await app.driver.wait(
        async () =>
          (await count(app, "[data-testid=chat-error]")) > 0 ||
          ((await count(app, "[data-testid=streaming-reply], .interrupted")) === 0 &&
            (await count(app, "[data-testid=message][data-role=assistant]")) > 0),
        REPLY_TIMEOUT,
        "the reply is stored",
      );
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const errors = await app.driver.findElements(By.css("[data-testid=chat-error]"));
      const error = errors.length > 0 ? await errors[0]?.getText() : "";
      expect(error, "the chat failed in the window").toBe("");

      const drafts = await app.driver.executeScript<string[]>("return window.__drafts");
      const stored = storedMessages(app.home, tree);
      const replies = stored.filter((m) => m.role === "assistant");
      console.warn(
        `llama-server over ${api}: ${seconds} s, ${drafts.length} drafts seen; stored replies ${JSON.stringify(replies.map((m) => m.content))}; tool calls ${JSON.stringify(replies.map((m) => m.tool_calls).filter((c) => c !== null))}`,
      );
      expect(replies.length).toBeGreaterThan(0);
      const first = replies[0];
      expect(first?.interrupted).toBe(false);
      expect(first?.model).toBe(MODEL);
      expect(stored.find((m) => m.role === "user")?.content).toBe(
        "Write three short sentences about the sea.",
      );
      if (first !== undefined && first.content.trim() !== "") {
        // The text grew in the pane before it was stored, and the stored reply the pane shows
        // in the end holds what streamed (its last word aside, which may have been cut short).
        expect(drafts.length).toBeGreaterThan(0);
        const shown = await app.driver.findElement(By.css("[data-testid=messages]")).getText();
        const streamed = words(drafts.at(-1) ?? "").slice(0, -1);
        expect(words(shown).join(" ")).toContain(streamed.join(" "));
      } else {
        // The model answered with only a tool call: it is stored as a call, not as text.
        expect(first?.tool_calls).not.toBeNull();
      }
    },
    {
      prepareHome: async (scratch) => {
        const home = join(scratch, "home");
        await mkdir(home);
        const made = flame(home, "tree", "new", "Plan a small web app", "--criteria", "A plan");
        tree = (made as { tree: string }).tree;
        return home;
      },
      env: (scratch) => settingsEnv(scratch, api),
    },
  );
}

describe.skipIf(!PRESENT)("chatting with llama-server in the window", () => {
  it("streams and stores a reply over the OpenAI API", () => chatOver("openai"), 200_000);
  it("streams and stores a reply over the Anthropic API", () => chatOver("anthropic"), 200_000);
});

describe.skipIf(!PRESENT)("llama-server found by itself in the window", () => {
  it("lists the server's model in the picker with its window, chosen with nothing configured", async () => {
    let address = "";
    await withApp(
      "llama-server found",
      async (app) => {
        const picker = await app.find("[data-testid=model-picker]");
        const local = `local:${address}/${MODEL}`;
        await app.driver.wait(
          async () => (await picker.getAttribute("value")) === local,
          20_000,
          "the picker offers and chooses the local model",
        );
        const option = await picker.findElement(By.css(`option[value="${local}"]`));
        expect(await option.getAttribute("textContent")).toBe(`${MODEL} · 8k`);
        // With one source only the picker lists its models without a group heading.
        expect(await picker.findElements(By.css("optgroup"))).toHaveLength(0);
        await keepScreenshot(app, "model-picker-local-server");
        // The settings say where Flame looked and what answered there.
        const settings = await app.driver.findElements(By.xpath("//button[text()='Settings…']"));
        await settings[0]?.click();
        const found = await app.find(
          `[data-testid=local-server-status] li[data-address="${address}"]`,
        );
        expect(await found.getText()).toBe(`${address} llama.cpp, 1 model`);
        const box = await app.find("textarea[name=local_servers]");
        expect(await box.getAttribute("value")).toBe(address);
      },
      {
        prepareHome: async (scratch) => {
          const home = join(scratch, "home");
          await mkdir(home);
          flame(home, "tree", "new", "Try a local model", "--criteria", "It answers");
          return home;
        },
        env: async (scratch) => {
          if (server === null) throw new Error("llama-server is not running");
          address = `127.0.0.1:${server.port}`;
          const config = join(scratch, "config");
          await mkdir(join(config, "flame"), { recursive: true });
          // No model named: only where to look, since the server is not on llama.cpp's 8080.
          await writeFile(
            join(config, "flame/settings.json"),
            JSON.stringify({ local_servers: [address] }),
          );
          return { XDG_CONFIG_HOME: config, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" };
        },
      },
    );
  }, 120_000);
});
