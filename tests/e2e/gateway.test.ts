// The gateway from the window: the person turns it on in the Sessions view on a free port; a
// client (this test, speaking Chat Completions as OpenCode does) sends its model calls to the
// address the view shows, with the scripted model (`fake-model.ts`) as the OpenAI upstream the
// settings name; the session becomes a tree that the tree menu lists and that grows with the
// next call, the view lists it with what it was billed, and its frame's header says so too.

import { join } from "node:path";

import { By } from "selenium-webdriver";
import { describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { freePort, keepScreenshot, textOf, withApp, type App } from "./harness";

const SYSTEM = { role: "system", content: "You are opencode, a coding agent." };
const ASK = { role: "user", content: "How long is notes.txt?" };
const TOOLS = [
  {
    type: "function",
    function: { name: "read", parameters: { type: "object", properties: { path: {} } } },
  },
];
const CALL = {
  role: "assistant",
  content: "",
  tool_calls: [
    {
      id: "call_read",
      type: "function",
      function: { name: "read", arguments: '{"path":"notes.txt"}' },
    },
  ],
};

/** Sends a Chat Completions request as OpenCode would, and reads its streamed reply whole. */
async function chat(base: string, messages: object[]): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "opencode/1.18.33",
      "x-session-id": "ses_e2e",
      authorization: "Bearer sk-e2e-not-a-real-key",
    },
    body: JSON.stringify({ model: "gpt-4o", stream: true, tools: TOOLS, messages }),
  });
  return { status: response.status, body: await response.text() };
}

/** The tree menu's entries, by title. */
async function treeTitles(app: App): Promise<string[]> {
  const options = await app.driver.findElements(By.css("[data-testid=tree-select] option"));
  return Promise.all(options.map(async (o) => (await o.getAttribute("textContent")) ?? ""));
}

describe("the gateway in the window", () => {
  it("runs when turned on in the Sessions view, and a client's session becomes a tree that grows", async () => {
    const model = new FakeModel({ pieces: ["notes.txt has ", "3 lines."] });
    model.answer({
      pieces: [],
      tool: { name: "read", arguments: { path: "notes.txt" } },
      interval: 20,
      usage: { prompt: 1_200, cached: 0, completion: 20 },
    });
    model.answer({
      pieces: ["notes.txt has ", "3 lines."],
      interval: 20,
      usage: { prompt: 1_300, cached: 1_024, completion: 12 },
    });
    await model.start();
    const port = await freePort();
    try {
      await withApp(
        "gateway from the window",
        async (app) => {
          await (await app.find("[data-testid=sessions-button]")).click();
          await app.find("[data-testid=gateway][data-on=false]");
          const portField = await app.find("input[name=gateway-port]");
          await portField.clear();
          await portField.sendKeys(String(port));
          await (await app.find("[data-testid=gateway-port-use]")).click();
          await app.driver.wait(
            async () =>
              (await app.driver.findElements(By.css("[data-testid=gateway-port-use]"))).length ===
              0,
            10_000,
            "the port saved",
          );
          await (await app.find("[data-testid=gateway-on]")).click();
          const section = await app.find(`[data-testid=gateway][data-on=true]`);
          await app.driver.wait(
            async () => (await section.getAttribute("data-listening")) !== "",
            10_000,
            "the gateway listening",
          );
          const address = await textOf(app, "[data-testid=gateway-address] code");
          expect(address).toBe(`http://127.0.0.1:${port}`);
          const lines = await app.driver.findElements(By.css("[data-testid=gateway-line]"));
          expect(await lines[0]!.getAttribute("textContent")).toBe(
            `export ANTHROPIC_BASE_URL=${address}`,
          );

          // The client's first call: forwarded as it came, and its session becomes a tree.
          const first = await chat(address, [SYSTEM, ASK]);
          expect(first.status).toBe(200);
          expect(first.body).toContain("call_read");
          expect(model.received[0]?.all).toEqual([SYSTEM.content, ASK.content]);
          const row = `[data-gateway-session="opencode:ses_e2e"]`;
          await app.driver.wait(
            async () => (await textOf(app, `${row} [data-testid=gateway-calls]`)) === "1 call",
            10_000,
            "the session listed with its call",
          );
          await app.driver.wait(
            async () => (await treeTitles(app)).includes(ASK.content),
            10_000,
            "the session's tree in the tree menu",
          );

          // The next call of the same session grows the same tree.
          const second = await chat(address, [
            SYSTEM,
            ASK,
            CALL,
            { role: "tool", tool_call_id: "call_read", content: "one\ntwo\nthree" },
          ]);
          expect(second.status).toBe(200);
          await app.driver.wait(
            async () => (await textOf(app, `${row} [data-testid=gateway-calls]`)) === "2 calls",
            10_000,
            "the second call listed",
          );
          expect((await treeTitles(app)).filter((t) => t === ASK.content)).toHaveLength(1);
          expect(await textOf(app, `${row} [data-testid=gateway-billed]`)).toMatch(/^billed \$/);
          expect(await textOf(app, `${row} [data-testid=gateway-client-cost]`)).toMatch(
            /^the agent's own requests: \$/,
          );

          // Open: the session's tree in the window, its frame's header saying what the gateway
          // billed there.
          await (await app.find(`${row} [data-testid=open-gateway-session]`)).click();
          const line = await app.find("[data-testid=frame-gateway-cost]");
          expect(await line.getText()).toMatch(
            /^billed \$\S+ through the gateway \(the agent's own requests: \$\S+\)$/,
          );
          await app.driver.wait(
            async () => (await textOf(app, "[data-testid=messages]")).includes("3 lines."),
            10_000,
            "the reply in the tree's conversation",
          );
          // The view again, over the session's tree: the picture in docs/gateway.png.
          await (await app.find("[data-testid=sessions-button]")).click();
          await app.find(`${row} [data-testid=gateway-billed]`);
          await keepScreenshot(app, "gateway");
        },
        {
          env: async (scratch) => ({
            ...(await model.settingsEnv(scratch)),
            CLAUDE_CONFIG_DIR: join(scratch, "claude"),
            CODEX_HOME: join(scratch, "codex"),
            XDG_DATA_HOME: join(scratch, "xdg-data"),
          }),
        },
      );
    } finally {
      await model.stop();
    }
  });
});
