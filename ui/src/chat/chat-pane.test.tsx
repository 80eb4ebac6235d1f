import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend, ChatListener } from "../backend";
import type {
  ApiError,
  ChatOutcome,
  FrameEntry_Serialize as FrameEntry,
  FrameOutline_Serialize as FrameOutline,
  Message_Serialize as Message,
  Status,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { answer, fakeBackend, settle } from "../test-backend";
import { ChatPane, type RunCommand } from "./chat-pane";

const ROOT = "f0000000001";
const FRAME = "f0000000002";

function outlineFrame(
  id: string,
  parent: string | null,
  title: string,
  status: Status,
): FrameOutline {
  return {
    id,
    parent,
    position: 0,
    title,
    status,
    success_criteria_compacted: null,
    retry_of: null,
    created_at: 0,
    started_at: null,
    ended_at: null,
    message_count: 0,
    tokens: 0,
  };
}

function outline(status: Status): TreeOutline {
  return {
    tree: { id: "t0000000001", title: "Build", root: ROOT, focus: FRAME, created_at: 0 },
    frames: [
      outlineFrame(ROOT, null, "Build the app", "in_progress"),
      outlineFrame(FRAME, ROOT, "Design", status),
      { ...outlineFrame("f0000000003", FRAME, "Sketch", "planned"), position: 0 },
    ],
    seq: 1,
  };
}

function entry(status: Status): FrameEntry {
  return {
    ...outlineFrame(FRAME, ROOT, "Design", status),
    tree: "t0000000001",
    success_criteria: "A plan exists",
    status_reason: null,
    results: status === "completed" ? "The plan is **done**" : null,
    results_compacted: null,
    artifacts: [],
    decisions: [],
    log_path: "/tmp/log.md",
  };
}

function message(
  id: number,
  role: Message["role"],
  content: string,
  extra: Partial<Message> = {},
): Message {
  return {
    id,
    frame: FRAME,
    role,
    content,
    tool_calls: null,
    tool_result: null,
    tokens: 1,
    model: role === "assistant" ? "gpt-4o" : null,
    usage: null,
    created_at: 0,
    interrupted: false,
    ...extra,
  };
}

const FINISHED: ChatOutcome = {
  frame: FRAME,
  rounds: 1,
  stopped: { kind: "finished" },
  usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
};

/** Runs a command the way the app does, minus the reload. */
const run: RunCommand = async (call) => {
  const result = await call;
  return result.status === "error" ? result.error : null;
};

async function mount(backend: Backend, status: Status = "in_progress"): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  const tree = outline(status);
  const focused = tree.frames[1];
  if (focused === undefined) throw new Error("the outline has no focused frame");
  await act(async () => {
    render(
      <ChatPane
        backend={backend}
        outline={tree}
        frame={focused}
        run={run}
        onFocus={() => undefined}
      />,
      root,
    );
    await settle();
  });
  // Effects run when the first act ends; the reads they start get their own turn.
  await act(settle);
  return root;
}

async function type(root: HTMLElement, text: string) {
  const box = root.querySelector<HTMLTextAreaElement>("textarea[name=message]");
  if (box === null) throw new Error("no composer");
  await act(async () => {
    box.value = text;
    box.dispatchEvent(new Event("input"));
    await settle();
  });
  return box;
}

async function pressEnter(box: HTMLTextAreaElement, shiftKey = false) {
  await act(async () => {
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey, cancelable: true }));
    await settle();
  });
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the chat pane", () => {
  it("shows the header, criteria, breadcrumb and the conversation as cards", async () => {
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () =>
          answer([
            message(1, "user", "Plan it"),
            message(2, "assistant", "Pushing", {
              tool_calls: [{ id: "c1", name: "push_frame", arguments: { title: "Sketch" } }],
              interrupted: true,
            }),
            message(3, "tool", "pushed f0000000003", {
              tool_result: { tool_call_id: "c1", name: "push_frame", is_error: false },
            }),
            message(4, "note", "Moved here after a pop"),
          ]),
      }),
    );
    expect(root.querySelector("[data-testid=frame-criteria]")?.textContent).toContain(
      "A plan exists",
    );
    expect(root.querySelector("[data-testid=chat-breadcrumb]")?.textContent).toBe(
      "Build the app › Design",
    );
    const roles = [...root.querySelectorAll("[data-testid=message]")].map((m) =>
      m.getAttribute("data-role"),
    );
    expect(roles).toEqual(["user", "assistant", "tool", "note"]);
    expect(root.querySelector("[data-testid=tool-call]")?.getAttribute("data-tool")).toBe(
      "push_frame",
    );
    expect(root.querySelector(".interrupted")).not.toBeNull();
  });

  it("sends on Enter, keeps Shift+Enter for a new line, and streams the reply", async () => {
    const sent: string[] = [];
    let listener: ChatListener = () => undefined;
    let finish: (outcome: ChatOutcome) => void = () => undefined;
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        sendMessage: (_frame, text, _model, onEvent) => {
          sent.push(text);
          listener = onEvent;
          return new Promise((resolve) => (finish = (data) => resolve({ status: "ok", data })));
        },
      }),
    );
    const box = await type(root, "hello");
    await pressEnter(box, true);
    expect(sent).toEqual([]);
    await pressEnter(box);
    expect(sent).toEqual(["hello"]);
    expect(root.querySelector("[data-testid=stop-button]")).not.toBeNull();
    await act(async () => {
      listener({ kind: "text", frame: FRAME, text: "Hi " });
      listener({ kind: "text", frame: FRAME, text: "<b>there</b>" });
      await settle();
    });
    const streaming = root.querySelector("[data-testid=streaming-reply]");
    expect(streaming?.textContent).toContain("Hi <b>there</b>");
    expect(streaming?.querySelector("b")).toBeNull();
    await act(async () => {
      finish(FINISHED);
      await settle();
    });
    expect(root.querySelector("[data-testid=streaming-reply]")).toBeNull();
    expect(root.querySelector("[data-testid=stop-button]")).toBeNull();
  });

  it("shows the reply being streamed once: its stored open copy gives way to the draft", async () => {
    let listener: ChatListener = () => undefined;
    let finish: (outcome: ChatOutcome) => void = () => undefined;
    let history: Message[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer(history),
        sendMessage: (_frame, _text, _model, onEvent) => {
          listener = onEvent;
          return new Promise((resolve) => (finish = (data) => resolve({ status: "ok", data })));
        },
      }),
    );
    await pressEnter(await type(root, "hello"));
    // The store now holds the person's message and the open reply, saved as far as it went.
    history = [message(1, "user", "hello"), message(2, "assistant", "Hi", { interrupted: true })];
    await act(async () => {
      listener({ kind: "saved", frame: FRAME, message: 1 });
      await settle();
    });
    await act(async () => {
      listener({ kind: "text", frame: FRAME, text: "Hi there" });
      await settle();
    });
    const roles = () =>
      [...root.querySelectorAll("[data-testid=message]")].map((m) => m.getAttribute("data-role"));
    expect(roles()).toEqual(["user"]);
    expect(root.querySelector("[data-testid=streaming-reply]")?.textContent).toContain("Hi there");
    history = [message(1, "user", "hello"), message(2, "assistant", "Hi there")];
    await act(async () => {
      listener({ kind: "saved", frame: FRAME, message: 2 });
      finish(FINISHED);
      await settle();
    });
    await act(settle);
    expect(roles()).toEqual(["user", "assistant"]);
    expect(root.querySelector("[data-testid=streaming-reply]")).toBeNull();
    expect(root.querySelector(".interrupted")).toBeNull();
  });

  it("shows Flame's suggestions, and accepting a pop one opens the pop dialog", async () => {
    let listener: ChatListener = () => undefined;
    let finish: (outcome: ChatOutcome) => void = () => undefined;
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        sendMessage: (_frame, _text, _model, onEvent) => {
          listener = onEvent;
          return new Promise((resolve) => (finish = (data) => resolve({ status: "ok", data })));
        },
      }),
    );
    await pressEnter(await type(root, "are we done?"));
    await act(async () => {
      listener({
        kind: "suggestion",
        frame: FRAME,
        suggestion: { kind: "push", reason: "the work turns to other files" },
      });
      listener({
        kind: "suggestion",
        frame: FRAME,
        suggestion: { kind: "pop", reason: "the reply says the criteria are met" },
      });
      finish(FINISHED);
      await settle();
    });
    const chips = () => [...root.querySelectorAll<HTMLElement>("[data-testid=suggestion]")];
    expect(chips().map((c) => c.dataset["kind"])).toEqual(["push", "pop"]);
    const dismiss = [...(chips()[0]?.querySelectorAll("button") ?? [])].find(
      (b) => b.textContent === "Dismiss",
    );
    await act(async () => {
      dismiss?.click();
      await settle();
    });
    expect(chips().map((c) => c.dataset["kind"])).toEqual(["pop"]);
    const accept = [...(chips()[0]?.querySelectorAll("button") ?? [])].find(
      (b) => b.textContent === "Pop…",
    );
    await act(async () => {
      accept?.click();
      await settle();
    });
    expect(chips()).toEqual([]);
    expect(root.querySelector("[data-testid=pop-dialog]")).not.toBeNull();
  });

  it("shows a failed reply's error in place, and Retry sends the message again", async () => {
    const noModel: ApiError = { code: "invalid", message: "no model is configured: choose one" };
    let attempts = 0;
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        sendMessage: () => {
          attempts++;
          return answer<ChatOutcome>(attempts === 1 ? noModel : FINISHED);
        },
      }),
    );
    await pressEnter(await type(root, "hello"));
    const error = root.querySelector("[data-testid=chat-error]");
    expect(error?.textContent).toContain("no model is configured");
    const retry = [...(error?.querySelectorAll("button") ?? [])].find(
      (b) => b.textContent === "Retry",
    );
    await act(async () => {
      retry?.click();
      await settle();
    });
    expect(attempts).toBe(2);
    expect(root.querySelector("[data-testid=chat-error]")).toBeNull();
  });

  it("retries a reply that failed after the message was stored by answering again, not resending", async () => {
    const dropped: ApiError = { code: "model_failed", message: "the connection dropped" };
    let sent = 0;
    const answeredIn: string[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        sendMessage: (_frame, _text, _model, listener: ChatListener) => {
          sent++;
          listener({ kind: "saved", frame: FRAME, message: 7 });
          return answer<ChatOutcome>(dropped);
        },
        answerAgain: (frame) => {
          answeredIn.push(frame);
          return answer<ChatOutcome>(FINISHED);
        },
      }),
    );
    await pressEnter(await type(root, "hello"));
    expect(root.querySelector("[data-testid=chat-error]")?.textContent).toContain("dropped");
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=retry-answer]")?.click();
      await settle();
    });
    expect(sent).toBe(1);
    expect(answeredIn).toEqual([FRAME]);
    expect(root.querySelector("[data-testid=chat-error]")).toBeNull();
  });

  it("runs /push through the backend and shows a bad command's usage", async () => {
    const pushed: string[][] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        pushFrame: (parent, title, criteria) => {
          pushed.push([String(parent), title, criteria]);
          return answer<never>({ code: "refused", message: "Design is not in progress" });
        },
      }),
    );
    await type(root, "/p");
    expect(root.querySelectorAll("[data-testid=completions] li")).toHaveLength(3);
    const box = await type(root, "/push Sketch :: drawn");
    await pressEnter(box);
    expect(pushed).toEqual([[FRAME, "Sketch", "drawn"]]);
    expect(root.querySelector("[data-testid=composer-error]")?.textContent).toBe(
      "Design is not in progress",
    );
    await pressEnter(await type(root, "/push Sketch"));
    expect(root.querySelector("[data-testid=composer-error]")?.textContent).toContain(
      "TITLE :: CRITERIA",
    );
  });

  it("/start starts the first planned child", async () => {
    const started: string[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        startFrame: (id) => {
          started.push(id);
          return answer<never>({ code: "refused", message: "no" });
        },
      }),
    );
    await pressEnter(await type(root, "/start"));
    expect(started).toEqual(["f0000000003"]);
  });

  it("offers Resume instead of the composer for a blocked frame", async () => {
    const resumed: string[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("blocked")),
        frameMessages: () => answer<Message[]>([]),
        resumeFrame: (id) => {
          resumed.push(id);
          return answer<never>({ code: "refused", message: "cannot resume" });
        },
      }),
      "blocked",
    );
    expect(root.querySelector("[data-testid=composer]")).toBeNull();
    const action = root.querySelector<HTMLButtonElement>("[data-testid=frame-action]");
    expect(action?.textContent).toBe("Resume");
    await act(async () => {
      action?.click();
      await settle();
    });
    expect(resumed).toEqual([FRAME]);
    expect(root.querySelector("[data-testid=read-only]")?.textContent).toContain("cannot resume");
  });

  it("shows a completed frame's results, escaped", async () => {
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("completed")),
        frameMessages: () => answer<Message[]>([]),
      }),
      "completed",
    );
    expect(root.querySelector("[data-testid=frame-results] strong")?.textContent).toBe("done");
    expect(root.querySelector("[data-testid=frame-action]")).toBeNull();
  });

  it("asks for approval and answers it", async () => {
    const answers: boolean[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        sendMessage: () =>
          answer<ChatOutcome>({
            ...FINISHED,
            stopped: {
              kind: "awaiting_approval",
              call: { id: "c1", name: "pop_frame", arguments: { status: "completed" } },
            },
          }),
        answerRequest: (_frame, accept) => {
          answers.push(accept);
          return answer(FINISHED);
        },
      }),
    );
    await pressEnter(await type(root, "done?"));
    const approval = root.querySelector("[data-testid=approval]");
    expect(approval?.textContent).toContain("pop_frame");
    const refuse = [...(approval?.querySelectorAll("button") ?? [])].find(
      (b) => b.textContent === "Refuse",
    );
    await act(async () => {
      refuse?.click();
      await settle();
    });
    expect(answers).toEqual([false]);
    expect(root.querySelector("[data-testid=approval]")).toBeNull();
  });

  it("lets the person write the results when generating them fails, and pops with them", async () => {
    const pops: unknown[] = [];
    const root = await mount(
      fakeBackend({
        frameDetail: () => answer(entry("in_progress")),
        frameMessages: () => answer<Message[]>([]),
        generateResults: () =>
          answer<never>({ code: "invalid", message: "no model is configured." }),
        popFrame: (_id, request) => {
          pops.push(request);
          return answer(entry("completed"));
        },
      }),
    );
    await pressEnter(await type(root, "/pop"));
    const dialog = root.querySelector<HTMLFormElement>("[data-testid=pop-dialog]");
    expect(dialog?.textContent).toContain("no model is configured.");
    const results = dialog?.querySelector<HTMLTextAreaElement>("textarea[name=results]");
    await act(async () => {
      if (results) {
        results.value = "Wrote it by hand";
        results.dispatchEvent(new Event("input"));
      }
      await settle();
    });
    await act(async () => {
      dialog?.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
    expect(pops).toEqual([
      {
        status: "completed",
        results: "Wrote it by hand",
        results_compacted: null,
        artifacts: [],
        decisions: [],
        reason: null,
      },
    ]);
    expect(root.querySelector("[data-testid=pop-dialog]")).toBeNull();
  });
});
