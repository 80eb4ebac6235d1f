// Chatting with a model in the real window: the reply streams through the Tauri channel and is
// stored, Stop keeps what arrived, the agent's push moves the conversation and the graph draws the
// new frame, and the pop dialog shows the model's proposed results to edit before saving. The
// model is the scripted server of fake-model.ts, so nothing leaves the machine.

import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { By, Key } from "selenium-webdriver";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { FakeModel } from "./fake-model";
import { flame, status, type StatusFrame } from "./flame-cli";
import { type App, keepScreenshot, withApp, textOf } from "./harness";

const PIECES = ["Hello", " from the", " model: ", '<img src=x onerror="document.title=1">'];

const model = new FakeModel({ pieces: PIECES });

beforeAll(() => model.start());
beforeEach(() => model.reset());
afterAll(() => model.stop());

/**
 * Starts the window on a new tree "Say hello" (its root passed to `body`), with the fake model as
 * the default and `models` listed in the settings.
 */
function launch(
  name: string,
  body: (app: App, root: string) => Promise<void>,
  models: object[] = [],
) {
  let root = "";
  return withApp(name, (app) => body(app, root), {
    prepareHome: async (scratch) => {
      const home = join(scratch, "home");
      await mkdir(home);
      const tree = flame(home, "tree", "new", "Say hello", "--criteria", "It said hello");
      root = (tree as { root: string }).root;
      return home;
    },
    env: (scratch) => model.settingsEnv(scratch, models),
  });
}

/** How many elements match `css` now. */
async function count(app: App, css: string): Promise<number> {
  return (await app.driver.findElements(By.css(css))).length;
}

/**
 * Waits for the one reply to be stored. It is stored as it streams, and complete when it is no
 * longer marked interrupted and the draft is gone.
 */
async function replyStored(app: App): Promise<void> {
  await app.driver.wait(
    async () =>
      (await count(app, "[data-testid=streaming-reply], .interrupted")) === 0 &&
      (await count(app, "[data-testid=message][data-role=assistant]")) === 1,
    15_000,
    "the reply is stored",
  );
}

describe("chatting with a model", () => {
  it("streams the reply into the pane, stores it, and shows its markup as text", async () => {
    await launch("model chat", async (app, root) => {
      const box = await app.find("[data-testid=composer] textarea");
      const titleBefore = await app.driver.getTitle();
      await box.sendKeys("hello from the window", Key.ENTER);
      await app.find("[data-testid=streaming-reply]");
      await app.find("[data-testid=stop-button]");
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=streaming-reply]")).includes("Hello"),
        10_000,
        "the reply streams in",
      );
      await replyStored(app);
      const reply = await app.find("[data-testid=message][data-role=assistant]");
      expect(await reply.getText()).toContain(PIECES.join(""));
      expect(await app.driver.findElements(By.css("[data-testid=messages] img"))).toHaveLength(0);
      expect(await app.driver.getTitle()).toBe(titleBefore);
      expect(model.received.at(-1)?.last).toContain("hello from the window");
      // The frame's place in the stack is the conversation's first message, after the preamble.
      expect(model.received.at(-1)?.opening).toContain("<stack-context id=");
      expect(model.received.at(-1)?.system).not.toContain("<stack-context id=");
      const stored = flame(app.home, "log", root);
      expect(JSON.stringify(stored)).toContain("Hello from the model");
    });
  });

  it("shows the frame's opening and cache in the inspector, and makes the opening again", async () => {
    model.answer(
      { pieces: ["Hello."], interval: 10, usage: { prompt: 2_000, cached: 1_500, completion: 20 } },
      { pieces: ["Hello again."], interval: 10 },
    );
    await launch("inspector opening", async (app, root) => {
      const box = await app.find("[data-testid=composer] textarea");
      await box.sendKeys("hello", Key.ENTER);
      await replyStored(app);
      // A frame the model has not been told of: the next call appends a note on it.
      flame(app.home, "plan", "Write the tests", "--criteria", "They pass", "--parent", root);
      await (await app.find("[data-testid=inspector-toggle]")).click();
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=context-next-call]")).includes("a note on 1"),
        10_000,
        "the inspector tells of the note the next call appends",
      );
      expect(await textOf(app, "[data-testid=context-opening]")).toMatch(
        /^Opening 1 \([\d,]+ tokens\): made when the conversation entered the frame, .+\.$/,
      );
      expect(await textOf(app, "[data-testid=context-next-call]")).toMatch(
        /^The next call reads about \S+ tokens from the provider's cache and writes about \S+; appends a note on 1 frame that changed\.$/,
      );
      expect(await textOf(app, "[data-testid=context-hit-rate]")).toContain("75.0%");
      expect(await textOf(app, "[data-testid=context-opening-text]")).toContain("Say hello");
      expect(await textOf(app, "[data-testid=context-opening-text]")).not.toContain(
        "Write the tests",
      );

      await (await app.find("[data-testid=rebuild-opening]")).click();
      await app.driver.wait(
        async () =>
          (await textOf(app, "[data-testid=rebuild-status]")).includes(
            "the next call makes the opening again",
          ),
        10_000,
        "the new opening is announced",
      );
      expect(await textOf(app, "[data-testid=context-opening]")).toMatch(
        /^The next call makes opening 2 \([\d,]+ tokens\): made again because the person asked\.$/,
      );
      expect(await textOf(app, "[data-testid=context-opening-text]")).toContain("Write the tests");
      expect(await app.find("[data-testid=rebuild-opening]").then((b) => b.isEnabled())).toBe(
        false,
      );
      await keepScreenshot(app, "inspector-opening");
      // The store has it, as the command line reads it.
      const read = flame(app.home, "context", root) as {
        report: { opening: { generation: number; reason: string; made_now: boolean } };
      };
      expect(read.report.opening).toMatchObject({ generation: 2, reason: "asked", made_now: true });

      // The next call sends that opening, and then it is the frame's.
      await (await app.find("[data-testid=composer] textarea")).sendKeys("and again", Key.ENTER);
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=messages]")).includes("Hello again."),
        15_000,
        "the second reply",
      );
      expect(model.received.at(-1)?.opening).toContain("Write the tests");
      await app.driver.wait(
        async () =>
          /^Opening 2 \([\d,]+ tokens\): made again because the person asked, .+\.$/.test(
            await textOf(app, "[data-testid=context-opening]"),
          ),
        10_000,
        "the inspector shows the opening as made",
      );
      expect(await textOf(app, "[data-testid=rebuild-status]")).toBe("");
    });
  });

  it("stops a reply, keeps what arrived, and answers again without resending", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i} `);
    model.answer({ pieces: long, interval: 150 }, { pieces: ["Picked up again."], interval: 20 });
    await launch("stop a reply", async (app, root) => {
      const box = await app.find("[data-testid=composer] textarea");
      await box.sendKeys("tell me a long story", Key.ENTER);
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=streaming-reply]")).includes("word3"),
        10_000,
        "the reply streams in",
      );
      const asked = model.received.length;
      await (await app.find("[data-testid=stop-button]")).click();
      await app.find("[data-testid=reply-stopped]");
      expect(await count(app, "[data-testid=chat-error]")).toBe(0);
      // The partial reply is stored, marked interrupted, and the composer is back.
      await app.find("[data-testid=message][data-role=assistant] .interrupted");
      await app.find("[data-testid=composer] button[type=submit]");
      const kept = (flame(app.home, "log", root) as { log: string }).log;
      expect(kept).toContain("word0");
      expect(kept).not.toContain("word59");

      await (await app.find("[data-testid=retry-answer]")).click();
      await app.driver.wait(
        async () => (await textOf(app, "[data-testid=messages]")).includes("Picked up again."),
        10_000,
        "the second answer",
      );
      expect(model.received.length).toBe(asked + 1);
      const resent = model.received.at(-1)?.all ?? [];
      expect(resent.filter((m) => m.includes("tell me a long story"))).toHaveLength(1);
    });
  });

  it("follows the agent into a frame it pushes, and the graph draws it", async () => {
    model.answer(
      {
        pieces: ["Greetings deserve their own frame."],
        tool: {
          name: "push_frame",
          arguments: { title: "Choose a greeting", success_criteria: "One greeting chosen" },
        },
        interval: 40,
      },
      { pieces: ["Working on the greeting now."], interval: 40 },
    );
    await launch("agent push", async (app, root) => {
      const box = await app.find("[data-testid=composer] textarea");
      await box.sendKeys("plan the greeting", Key.ENTER);
      await app.driver.wait(
        async () =>
          (await textOf(app, "[data-testid=focused-frame]")).includes("Choose a greeting"),
        15_000,
        "the pushed frame in focus",
      );
      await app.driver.wait(
        async () =>
          (await textOf(app, "[data-testid=messages]")).includes("Working on the greeting"),
        15_000,
        "the agent goes on in the new frame",
      );
      const pushed = status(app.home).frames.find((f) => f.title === "Choose a greeting");
      expect(pushed?.parent).toBe(root);
      expect(pushed?.status).toBe("in_progress");
      // The accessible mirror of the graph: present, though not drawn.
      const item = await app.driver.findElement(
        By.css(`[role=treeitem][data-frame-id="${pushed?.id}"]`),
      );
      expect(await item.getAttribute("aria-current")).toBe("true");
      // The model saw the new frame as its place in the stack.
      expect(model.received.at(-1)?.opening).toContain("Choose a greeting");
    });
  });

  it("pops with the model's proposed results, edited before saving", async () => {
    const proposal = {
      results: "Chose 'Hello, world' as the greeting.",
      results_compacted: "Greeting: Hello, world",
      artifacts: ["greeting.txt"],
      decisions: ["Plain over formal"],
      criteria_met: true,
    };
    model.answer({ pieces: [JSON.stringify(proposal)], interval: 10 });
    await launch("pop with generated results", async (app, root) => {
      await (await app.find("[data-testid=pop-button]")).click();
      const results = await app.find("[data-testid=pop-dialog] textarea[name=results]");
      await app.driver.wait(
        async () => ((await results.getAttribute("value")) ?? "").includes("Hello, world"),
        15_000,
        "the proposed results",
      );
      await results.sendKeys(" Checked by hand.");
      await (await app.find("[data-testid=pop-dialog] button[type=submit]")).click();
      await app.driver.wait(
        async () => (await count(app, "[data-testid=pop-dialog]")) === 0,
        10_000,
        "the dialog closes",
      );
      const popped = status(app.home).frames.find((f) => f.id === root) as
        (StatusFrame & { results: string; artifacts: string[] }) | undefined;
      expect(popped?.status).toBe("completed");
      expect(popped?.results).toBe("Chose 'Hello, world' as the greeting. Checked by hand.");
      expect(popped?.artifacts).toEqual(["greeting.txt"]);
      await app.find("[data-testid=read-only]");
    });
  });

  it("sends with the model picked in the composer", async () => {
    const llama = {
      name: "llama3.1:8b",
      provider: "openai",
      context_window: 131072,
      max_output_tokens: 4096,
    };
    await launch(
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
        expect(model.received.at(-1)?.last).toContain("which model are you?");
        expect(model.received.at(-1)?.model).toBe("llama3.1:8b");
        // The stored reply names the model that wrote it.
        const meta = await app.find("[data-testid=message][data-role=assistant] .message-meta");
        expect(await meta.getText()).toContain("llama3.1:8b");
      },
      [llama],
    );
  });

  it("asks to accept the agent's push, again after a restart, and pushes once accepted", async () => {
    model.answer(
      {
        pieces: ["This needs its own frame."],
        tool: {
          name: "push_frame",
          arguments: { title: "Write the greeting", success_criteria: "A greeting exists" },
        },
        interval: 20,
      },
      { pieces: ["Writing it now."], interval: 20 },
    );
    const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-ask-"));
    const home = join(scratch, "home");
    await mkdir(home);
    const root = (flame(home, "tree", "new", "Say hello", "--criteria", "c") as { root: string })
      .root;
    const options = {
      prepareHome: () => Promise.resolve(home),
      env: () => model.settingsEnv(scratch, [], { autonomy: "ask" }),
    };
    try {
      await withApp(
        "ask before a push",
        async (app) => {
          const box = await app.find("[data-testid=composer] textarea");
          await box.sendKeys("greet", Key.ENTER);
          const approval = await app.find("[data-testid=approval]");
          expect(await approval.getText()).toContain("push_frame");
          expect(status(home).frames).toHaveLength(1);
        },
        options,
      );
      await withApp(
        "ask again after a restart",
        async (app) => {
          const approval = await app.find("[data-testid=approval]");
          expect(await approval.getText()).toContain("Write the greeting");
          await (await approval.findElement(By.css("button.primary"))).click();
          await app.driver.wait(
            async () =>
              (await textOf(app, "[data-testid=focused-frame]")).includes("Write the greeting"),
            15_000,
            "the accepted push in focus",
          );
          const pushed = status(home).frames.find((f) => f.title === "Write the greeting");
          expect(pushed?.parent).toBe(root);
          expect(await count(app, "[data-testid=approval]")).toBe(0);
        },
        options,
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("adds a model in the settings, refusing one without a name, and offers it at once", async () => {
    let config = "";
    await withApp(
      "add a model",
      async (app) => {
        await (await app.find("[data-testid=settings-button]")).click();
        await (await app.find("[data-testid=add-model]")).click();
        // Enter in a field submits the form, as Save does.
        const name = await app.find("[data-testid=settings-model] input[name=model_name]");
        await name.sendKeys(Key.ENTER);
        const refusal = await app.find("[data-testid=settings-dialog] [role=alert]");
        expect(await refusal.getText()).toContain("has no name");
        await name.sendKeys("qwen2.5-coder:32b", Key.ENTER);
        await app.driver.wait(
          async () => (await count(app, "[data-testid=settings-dialog]")) === 0,
          5_000,
          "the dialog closes",
        );
        const picker = await app.find("[data-testid=model-picker]");
        const options = await picker.findElements(By.css("option"));
        expect(await Promise.all(options.map((o) => o.getAttribute("value")))).toEqual([
          "gpt-4o",
          "qwen2.5-coder:32b",
        ]);
        const saved = JSON.parse(await readFile(join(config, "flame/settings.json"), "utf8")) as {
          models: { name: string; context_window: number }[];
          openai: { api_key: string };
        };
        expect(saved.models).toEqual([
          expect.objectContaining({ name: "qwen2.5-coder:32b", context_window: 128000 }),
        ]);
        // The key the window never saw is kept.
        expect(saved.openai.api_key).toBe("sk-e2e-not-a-real-key");
      },
      {
        env: async (scratch) => {
          config = join(scratch, "config");
          return model.settingsEnv(scratch);
        },
      },
    );
  });
});
