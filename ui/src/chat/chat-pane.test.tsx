import { render } from "preact";
import { useState } from "preact/hooks";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Backend, ChatListener } from "../backend";
import type {
  ApiError,
  ChatOutcome,
  FrameActions_Serialize as FrameActions,
  FrameDetail_Serialize as FrameDetail,
  FrameOutline_Serialize as FrameOutline,
  Message_Serialize as Message,
  Settings_Serialize as Settings,
  Status,
  Answer_Deserialize as RequestAnswer,
  TreeOutline_Serialize as TreeOutline,
  WaitingRequest,
} from "../bindings";
import { frameActions, type RunCommand } from "../frame-actions";
import { SettingsDialog } from "../settings-dialog";
import { PopDialog } from "./pop-dialog";
import {
  DEFAULT_APPROVAL,
  GATEWAY_OFF,
  NO_FILES,
  MESSAGE_PAGE,
  answer,
  countingBackend,
  earlierMessagesOf,
  fakeBackend,
  frameChange,
  frameViewOf,
  outlineFrame,
  settle,
  storedMessage,
} from "../test-backend";
import { NO_TOKENS } from "../test-costs";
import { ChatPane } from "./chat-pane";
import { WINDOW_SIZE, WINDOW_STEP, type MessageRequest } from "./message-window";
import { useModelChoice } from "./model-picker";

const ROOT = "f0000000001";
const FRAME = "f0000000002";

function outlineFrameOf(
  id: string,
  parent: string | null,
  title: string,
  status: Status,
): FrameOutline {
  return outlineFrame(id, parent, { title, status });
}

function outline(status: Status): TreeOutline {
  return {
    tree: {
      id: "t0000000001",
      title: "Build",
      root: ROOT,
      focus: FRAME,
      created_at: 0,
      workspace: null,
    },
    frames: [
      outlineFrameOf(ROOT, null, "Build the app", "in_progress"),
      outlineFrameOf(FRAME, ROOT, "Design", status),
      { ...outlineFrameOf("f0000000003", FRAME, "Sketch", "planned"), position: 0 },
    ],
    seq: 1,
  };
}

/** What the backend allows with the focused frame in `status`, under the in-progress root. */
function actionsFor(status: Status): FrameActions {
  const open = status === "planned" || status === "in_progress";
  return {
    push: open,
    plan: open || status === "blocked",
    pop: status === "in_progress",
    start: status === "planned",
    resume: status === "blocked",
    retry: status === "failed",
    invalidate: open || status === "blocked" || status === "failed",
    edit: status === "planned",
    move: status === "planned",
    delete: status === "planned",
    chat: status === "in_progress",
    start_target: "f0000000003",
  };
}

function entry(status: Status): FrameDetail {
  return {
    ...outlineFrameOf(FRAME, ROOT, "Design", status),
    tree: "t0000000001",
    created_at: 0,
    success_criteria: "A plan exists",
    status_reason: null,
    results: status === "completed" ? "The plan is **done**" : null,
    results_compacted: null,
    artifacts: [],
    decisions: [],
    log_path: "/tmp/log.md",
    actions: actionsFor(status),
    files: NO_FILES,
  };
}

/**
 * The `frameView` command over a frame in `status` whose stored messages are `messages()`, the
 * request the agent waits on `waiting()` and the ids of the replies still open `open()`, each
 * read on every call so a test can store more; answered by the backend's rule (see `FrameView`
 * in bindings.ts).
 */
function views(
  status: Status,
  messages: () => Message[] = () => [],
  waiting: () => WaitingRequest | null = () => null,
  open: () => number[] = () => [],
): Backend["frameView"] {
  return frameViewOf(() => ({
    frame: entry(status),
    messages: messages(),
    open: open(),
    waiting: waiting(),
    seq: 1,
  }));
}

function message(
  id: number,
  role: Message["role"],
  content: string,
  extra: Partial<Message> = {},
): Message {
  return storedMessage(id, FRAME, role, content, {
    model: role === "assistant" ? "gpt-4o" : null,
    ...extra,
  });
}

const FINISHED: ChatOutcome = {
  frame: FRAME,
  rounds: 1,
  stopped: { kind: "finished" },
  usage: { ...NO_TOKENS, input_tokens: 1, output_tokens: 1 },
};

/** Runs a command the way the app does, minus the reload. */
const run: RunCommand = async (call) => {
  const result = await call;
  return result.status === "error" ? result.error : null;
};

/** The pane with the model choice and the settings dialog held above it, as the app holds them. */
function Pane({
  backend,
  tree,
  frame,
  messageRequest = null,
}: {
  backend: Backend;
  tree: TreeOutline;
  frame: FrameOutline;
  messageRequest?: MessageRequest | null;
}) {
  const models = useModelChoice(backend);
  const [settingsOpen, setSettingsOpen] = useState(false);
  // The app holds the pop dialog; this stands in for it, as for the settings.
  const [popping, setPopping] = useState(false);
  return (
    <>
      <ChatPane
        backend={backend}
        outline={tree}
        frame={frame}
        run={run}
        onFocus={() => undefined}
        models={models}
        onOpenSettings={() => setSettingsOpen(true)}
        onOpenDialog={(kind) => setPopping(kind === "pop")}
        messageRequest={messageRequest}
      />
      {popping && (
        <PopDialog
          backend={backend}
          frame={frame.id}
          title={frame.title}
          model={models.chosen}
          dispatch={frameActions(backend, run)}
          onClose={() => setPopping(false)}
        />
      )}
      {settingsOpen && (
        <SettingsDialog
          backend={backend}
          onSaved={models.update}
          onClose={() => setSettingsOpen(false)}
        />
      )}
    </>
  );
}

async function mount(
  backend: Backend,
  status: Status = "in_progress",
  root: HTMLElement = document.createElement("div"),
  focus = 1,
): Promise<HTMLElement> {
  document.body.append(root);
  const tree = outline(status);
  const focused = tree.frames[focus];
  if (focused === undefined) throw new Error("the outline has no focused frame");
  await act(async () => {
    render(<Pane backend={backend} tree={tree} frame={focused} />, root);
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

async function press(
  box: HTMLTextAreaElement,
  key: string,
  shiftKey = false,
): Promise<KeyboardEvent> {
  const event = new KeyboardEvent("keydown", { key, shiftKey, cancelable: true });
  await act(async () => {
    box.dispatchEvent(event);
    await settle();
  });
  return event;
}

async function pressEnter(box: HTMLTextAreaElement, shiftKey = false) {
  await press(box, "Enter", shiftKey);
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the chat pane", () => {
  it("shows the header, criteria, breadcrumb and the conversation as cards", async () => {
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress", () => [
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

  it("names an imported result by the call it answers", async () => {
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress", () => [
          message(1, "assistant", "", {
            tool_calls: [{ id: "toolu_1", name: "Read", arguments: { file_path: "src/a.rs" } }],
          }),
          message(2, "tool", "1→fn main() {}", {
            tool_result: { tool_call_id: "toolu_1", is_error: false },
          }),
        ]),
      }),
    );
    const result = root.querySelector("[data-testid=message][data-role=tool]");
    expect(result?.querySelector("summary strong")?.textContent).toBe("Read");
    expect(root.querySelector("[data-testid=tool-call] .tool-subject")?.textContent).toBe(
      " src/a.rs",
    );
  });

  it("sends on Enter, keeps Shift+Enter for a new line, and streams the reply", async () => {
    const sent: string[] = [];
    let listener: ChatListener = () => undefined;
    let finish: (outcome: ChatOutcome) => void = () => undefined;
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
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

  it("draws a streaming reply only in the frame it streams in", async () => {
    let listener: ChatListener = () => undefined;
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
        sendMessage: (_frame, _text, _model, onEvent) => {
          listener = onEvent;
          return new Promise(() => undefined);
        },
      }),
    );
    await pressEnter(await type(root, "hello"));
    await act(async () => {
      listener({ kind: "text", frame: FRAME, text: "Here " });
      await settle();
    });
    expect(root.querySelector("[data-testid=streaming-reply]")?.textContent).toContain("Here");
    // A pop moved the conversation to the parent, which answers there: not in this pane.
    await act(async () => {
      listener({ kind: "moved", from: FRAME, to: "f0000000001" });
      listener({ kind: "text", frame: "f0000000001", text: "In the parent" });
      await settle();
    });
    expect(root.querySelector("[data-testid=streaming-reply]")).toBeNull();
    expect(root.textContent).not.toContain("In the parent");
  });

  it("shows the reply being streamed once: its stored open copy gives way to the draft", async () => {
    let listener: ChatListener = () => undefined;
    let finish: (outcome: ChatOutcome) => void = () => undefined;
    let history: Message[] = [];
    let open: number[] = [];
    const root = await mount(
      fakeBackend({
        frameView: views(
          "in_progress",
          () => history,
          () => null,
          () => open,
        ),
        sendMessage: (_frame, _text, _model, onEvent) => {
          listener = onEvent;
          return new Promise((resolve) => (finish = (data) => resolve({ status: "ok", data })));
        },
      }),
    );
    await pressEnter(await type(root, "hello"));
    // The store now holds the person's message and the open reply, saved as far as it went.
    history = [message(1, "user", "hello"), message(2, "assistant", "Hi", { interrupted: true })];
    open = [2];
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
    open = [];
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
        frameView: views("in_progress"),
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
        frameView: views("in_progress"),
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
        frameView: views("in_progress"),
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
        frameView: views("in_progress"),
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
        frameView: views("in_progress"),
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
        frameView: views("blocked"),
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
        frameView: views("completed"),
      }),
      "completed",
    );
    expect(root.querySelector("[data-testid=frame-results] strong")?.textContent).toBe("done");
    expect(root.querySelector("[data-testid=frame-action]")).toBeNull();
  });

  it("asks for approval and answers it", async () => {
    const answers: RequestAnswer[] = [];
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
        sendMessage: () =>
          answer<ChatOutcome>({
            ...FINISHED,
            stopped: {
              kind: "awaiting_approval",
              request: frameChange({
                id: "c1",
                name: "pop_frame",
                arguments: { status: "completed" },
              }),
            },
          }),
        answerRequest: (_frame, given) => {
          answers.push(given);
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
    expect(answers).toEqual([{ kind: "refuse", reason: null }]);
    expect(root.querySelector("[data-testid=approval]")).toBeNull();
  });

  it("says why the agent stopped at a spent budget", async () => {
    const reason =
      "Stopped before the next model call: the budget of frame f0000000001 is spent: $2.00 of $2.00.";
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
        sendMessage: () =>
          answer<ChatOutcome>({
            ...FINISHED,
            stopped: { kind: "budget_spent", frame: "f0000000001", reason },
          }),
      }),
    );
    expect(root.querySelector("[data-testid=budget-stopped]")).toBeNull();
    await pressEnter(await type(root, "go on"));
    expect(root.querySelector("[data-testid=budget-stopped]")?.textContent).toBe(reason);
  });

  it("asks again for a request the agent stored before the app restarted", async () => {
    const answered: [string, RequestAnswer][] = [];
    let waiting: WaitingRequest | null = frameChange({
      id: "c9",
      name: "push_frame",
      arguments: { title: "Auth" },
    });
    const root = await mount(
      fakeBackend({
        frameView: views(
          "in_progress",
          () => [],
          () => waiting,
        ),
        answerRequest: (frame, given) => {
          answered.push([frame, given]);
          waiting = null;
          return answer(FINISHED);
        },
      }),
    );
    const approval = root.querySelector("[data-testid=approval]");
    expect(approval?.textContent).toContain("push_frame");
    expect(approval?.textContent).toContain("Auth");
    const accept = [...(approval?.querySelectorAll("button") ?? [])].find(
      (b) => b.textContent === "Accept",
    );
    await act(async () => {
      accept?.click();
      await settle();
    });
    await act(settle);
    expect(answered).toEqual([[FRAME, { kind: "accept" }]]);
    expect(root.querySelector("[data-testid=approval]")).toBeNull();
  });

  it("asks again for a workspace call stored before a restart, and allows its kind for the tree", async () => {
    const answered: [string, RequestAnswer][] = [];
    let waiting: WaitingRequest | null = {
      call: { id: "c7", name: "write_file", arguments: { path: "notes.md" } },
      ask: {
        kind: "workspace",
        tool_kind: "changing",
        preview: {
          kind: "change",
          path: "notes.md",
          created: true,
          diff: "+# Notes\n",
          base: "absent",
        },
      },
    };
    const root = await mount(
      fakeBackend({
        frameView: views(
          "in_progress",
          () => [],
          () => waiting,
        ),
        answerRequest: (frame, given) => {
          answered.push([frame, given]);
          waiting = null;
          return answer(FINISHED);
        },
      }),
    );
    const approval = root.querySelector("[data-testid=approval]");
    expect(approval?.getAttribute("data-tool-kind")).toBe("changing");
    expect(approval?.querySelector("[data-testid=approval-diff]")?.textContent).toContain(
      "+# Notes",
    );
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=approval-allow-kind]")?.click();
      await settle();
    });
    await act(settle);
    expect(answered).toEqual([[FRAME, { kind: "accept_kind", shown: "absent" }]]);
    expect(root.querySelector("[data-testid=approval]")).toBeNull();
  });

  it("draws a workspace tool's card while the reply streams", async () => {
    let listener: ChatListener = () => undefined;
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
        sendMessage: (_frame, _text, _model, onEvent) => {
          listener = onEvent;
          return new Promise(() => undefined);
        },
      }),
    );
    await pressEnter(await type(root, "run the tests"));
    await act(async () => {
      listener({ kind: "tool_call", frame: FRAME, id: "c1", name: "run_command" });
      listener({
        kind: "tool_result",
        frame: FRAME,
        id: "c1",
        name: "run_command",
        content: "test result: FAILED",
        is_error: false,
        detail: {
          kind: "command",
          command: "cargo test",
          exit_code: 101,
          ending: "exited",
          duration_ms: 900,
          output_bytes: 19,
          output_file: null,
          place: { kind: "sandbox", network: false },
        },
      });
      await settle();
    });
    const card = root.querySelector("[data-testid=streaming-reply] [data-testid=tool-card]");
    expect(card?.getAttribute("data-kind")).toBe("command");
    expect(card?.querySelector("[data-testid=tool-exit]")?.textContent).toBe("exit 101");
  });

  it("says in the header how many files the frame changed, listing them when opened", async () => {
    const files = { read: ["README.md"], changed: ["src/a.rs", "src/b.rs"] };
    const root = await mount(
      fakeBackend({
        frameView: frameViewOf(() => ({
          frame: { ...entry("completed"), files },
          messages: [],
          open: [],
          waiting: null,
          seq: 1,
        })),
      }),
      "completed",
    );
    const header = root.querySelector("[data-testid=frame-files]");
    expect(header?.getAttribute("data-changed")).toBe("2");
    expect(header?.querySelector("summary")?.textContent).toBe("2 files changed, 1 read");
    expect(header?.querySelector("summary")?.getAttribute("title")).toBe("src/a.rs\nsrc/b.rs");
    expect(
      [...(header?.querySelectorAll("[aria-label='Files changed'] li") ?? [])].map(
        (li) => li.textContent,
      ),
    ).toEqual(["src/a.rs", "src/b.rs"]);
  });

  it("opens the frame's Changes in place of the conversation, and goes back", async () => {
    const files = { read: [], changed: ["src/a.rs"] };
    const asked: [string, boolean][] = [];
    const root = await mount(
      fakeBackend({
        frameView: frameViewOf(() => ({
          frame: { ...entry("completed"), files },
          messages: [message(1, "user", "hello")],
          open: [],
          waiting: null,
          seq: 1,
        })),
        frameChanges: (id, subtree) => {
          asked.push([id, subtree]);
          return answer({
            frame: id,
            subtree,
            since: 1,
            until: 2,
            files: [],
            patch: "",
            truncated: false,
            unavailable: "nothing was snapshotted",
            roll_back: { kind: "unavailable", reason: "no changes" },
            rolled_back_at: null,
          });
        },
      }),
      "completed",
    );
    const toggle = root.querySelector<HTMLButtonElement>("[data-testid=changes-toggle]");
    expect(toggle?.textContent).toBe("Changes (1)");
    expect(toggle?.getAttribute("aria-pressed")).toBe("false");
    expect(root.querySelector("[data-testid=changes-view]")).toBeNull();
    await act(async () => {
      toggle?.click();
      await settle();
    });
    await act(settle);
    expect(asked).toEqual([[FRAME, false]]);
    expect(root.querySelector("[data-testid=changes-view]")).not.toBeNull();
    expect(root.querySelector("[data-testid=changes-unavailable]")?.textContent).toBe(
      "nothing was snapshotted",
    );
    expect(root.querySelector<HTMLElement>("[data-testid=messages]")?.hidden).toBe(true);
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=changes-back]")?.click();
      await settle();
    });
    expect(root.querySelector("[data-testid=changes-view]")).toBeNull();
    expect(root.querySelector<HTMLElement>("[data-testid=messages]")?.hidden).toBe(false);
  });

  it("says in the header when the frame's changes were rolled back", async () => {
    const tree = outline("failed");
    const rolled = { ...tree.frames[1]!, rolled_back_at: Date.UTC(2026, 10, 23, 12, 0) };
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(
        <Pane
          backend={fakeBackend({ frameView: views("failed") })}
          tree={{ ...tree, frames: [tree.frames[0]!, rolled, tree.frames[2]!] }}
          frame={rolled}
        />,
        root,
      );
      await settle();
    });
    await act(settle);
    expect(root.querySelector("[data-testid=frame-rolled-back]")?.textContent).toContain(
      "Rolled back",
    );
    document.body.replaceChildren();
    const plain = await mount(fakeBackend({ frameView: views("failed") }), "failed");
    expect(plain.querySelector("[data-testid=frame-rolled-back]")).toBeNull();
  });

  it("says nothing of files for a frame whose tools touched none", async () => {
    const root = await mount(fakeBackend({ frameView: views("in_progress") }));
    expect(root.querySelector("[data-testid=frame-criteria]")).not.toBeNull();
    expect(root.querySelector("[data-testid=frame-files]")).toBeNull();
  });

  it("lets the person write the results when generating them fails, and pops with them", async () => {
    const pops: unknown[] = [];
    const root = await mount(
      fakeBackend({
        frameView: views("in_progress"),
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

/** A backend with an in-progress frame and no conversation, plus `parts`. */
function composerBackend(parts: Partial<Backend> = {}): Backend {
  return fakeBackend({
    frameView: views("in_progress"),
    ...parts,
  });
}

describe("the composer's slash list", () => {
  /** The names of the offered commands, and which one is highlighted. */
  function offered(root: HTMLElement): { names: string[]; selected: string[] } {
    const options = [...root.querySelectorAll("[data-testid=completions] [role=option]")];
    return {
      names: options.map((o) => o.querySelector("code")?.textContent?.split(" ")[0] ?? ""),
      selected: options.filter((o) => o.getAttribute("aria-selected") === "true").map((o) => o.id),
    };
  }

  it("moves the highlight with Up and Down, wrapping, and points the textarea at it", async () => {
    const root = await mount(composerBackend());
    const box = await type(root, "/p");
    expect(offered(root)).toEqual({
      names: ["/push", "/plan", "/pop"],
      selected: ["slash-option-push"],
    });
    expect(box.getAttribute("aria-activedescendant")).toBe("slash-option-push");
    expect(box.getAttribute("aria-controls")).toBe("slash-completions");
    expect((await press(box, "ArrowDown")).defaultPrevented).toBe(true);
    expect(offered(root).selected).toEqual(["slash-option-plan"]);
    await press(box, "ArrowDown");
    await press(box, "ArrowDown");
    expect(offered(root).selected).toEqual(["slash-option-push"]);
    await press(box, "ArrowUp");
    expect(offered(root).selected).toEqual(["slash-option-pop"]);
    expect(box.getAttribute("aria-activedescendant")).toBe("slash-option-pop");
    expect(document.getElementById("slash-option-pop")?.getAttribute("role")).toBe("option");
  });

  it("takes the highlighted command with Enter or Tab, without sending", async () => {
    let sent = 0;
    const backend = composerBackend({
      sendMessage: () => {
        sent++;
        return answer(FINISHED);
      },
    });
    const root = await mount(backend);
    let box = await type(root, "/p");
    await press(box, "ArrowDown");
    await pressEnter(box);
    expect(box.value).toBe("/plan ");
    expect(root.querySelector("[data-testid=completions]")).toBeNull();
    box = await type(root, "/st");
    await press(box, "ArrowUp");
    expect((await press(box, "Tab")).defaultPrevented).toBe(true);
    expect(box.value).toBe("/status ");
    expect(sent).toBe(0);
  });

  it("closes on Escape, so Enter sends what is typed, and opens again on the next keystroke", async () => {
    const root = await mount(composerBackend());
    const box = await type(root, "/sta");
    await press(box, "Escape");
    expect(root.querySelector("[data-testid=completions]")).toBeNull();
    expect(box.hasAttribute("aria-activedescendant")).toBe(false);
    // With the list closed, Tab is the browser's again.
    expect((await press(box, "Tab")).defaultPrevented).toBe(false);
    await type(root, "/star");
    expect(offered(root).names).toEqual(["/start"]);
  });

  it("leaves Enter to the composer when the command is typed in full", async () => {
    const root = await mount(composerBackend());
    await pressEnter(await type(root, "/status"));
    expect(root.querySelector("[data-testid=status-card]")).not.toBeNull();
  });

  it("still takes a click, and keeps the focus in the textarea", async () => {
    const root = await mount(composerBackend());
    const box = await type(root, "/");
    box.focus();
    const option = document.getElementById("slash-option-invalidate");
    const press = new MouseEvent("mousedown", { bubbles: true, cancelable: true });
    option?.dispatchEvent(press);
    expect(press.defaultPrevented).toBe(true);
    await act(async () => {
      option?.dispatchEvent(new MouseEvent("mousemove", { bubbles: true }));
      await settle();
    });
    expect(offered(root).selected).toEqual(["slash-option-invalidate"]);
    await act(async () => {
      option?.click();
      await settle();
    });
    expect(box.value).toBe("/invalidate ");
    expect(document.activeElement).toBe(box);
  });
});

describe("the composer's model picker", () => {
  const SETTINGS: Settings = {
    default_model: "claude-sonnet-4-5",
    autonomy: "ask",
    approval: DEFAULT_APPROVAL,
    turn_budget: { micro_usd: 10_000_000, tokens: null, tool_calls: 250 },
    keep_tool_results: 3,
    project_instructions: true,
    checkpoint_cap_mb: 2048,
    gateway: GATEWAY_OFF.settings,
    anthropic: { base_url: null, api_key: "(set)" },
    openai: { base_url: "http://127.0.0.1:11434/v1", api_key: null },
    models: [
      { name: "llama3.1:8b", provider: "openai", context_window: 131072, max_output_tokens: 4096 },
      {
        name: "claude-sonnet-4-5",
        provider: "anthropic",
        context_window: 200000,
        max_output_tokens: 8192,
      },
    ],
  };

  function picker(root: HTMLElement): HTMLSelectElement {
    const select = root.querySelector<HTMLSelectElement>("[data-testid=model-picker]");
    if (select === null) throw new Error("no model picker");
    return select;
  }

  async function choose(root: HTMLElement, model: string) {
    await act(async () => {
      const select = picker(root);
      select.value = model;
      select.dispatchEvent(new Event("change"));
      await settle();
    });
  }

  it("lists the configured models, the default first and preselected, and sends with it", async () => {
    const models: (string | null)[] = [];
    const root = await mount(
      composerBackend({
        getSettings: () => answer(SETTINGS),
        sendMessage: (_frame, _text, model) => {
          models.push(model);
          return answer(FINISHED);
        },
      }),
    );
    const select = picker(root);
    expect([...select.options].map((o) => o.value)).toEqual(["claude-sonnet-4-5", "llama3.1:8b"]);
    expect(select.value).toBe("claude-sonnet-4-5");
    await pressEnter(await type(root, "hello"));
    await choose(root, "llama3.1:8b");
    await pressEnter(await type(root, "again"));
    expect(models).toEqual(["claude-sonnet-4-5", "llama3.1:8b"]);
  });

  it("sends the chosen model with an approval and with the pop dialog's generated results", async () => {
    const calls: string[] = [];
    const waiting: ChatOutcome = {
      ...FINISHED,
      stopped: {
        kind: "awaiting_approval",
        request: frameChange({ id: "c1", name: "pop_frame", arguments: {} }),
      },
    };
    const root = await mount(
      composerBackend({
        getSettings: () => answer(SETTINGS),
        sendMessage: (_frame, _text, model) => {
          calls.push(`send ${model}`);
          return answer(waiting);
        },
        answerRequest: (_frame, _accept, model) => {
          calls.push(`answer ${model}`);
          return answer(FINISHED);
        },
        generateResults: (_frame, model) => {
          calls.push(`results ${model}`);
          return answer<never>({ code: "invalid", message: "not now" });
        },
      }),
    );
    await choose(root, "llama3.1:8b");
    await pressEnter(await type(root, "pop when done"));
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=approval] button.primary")?.click();
      await settle();
    });
    await pressEnter(await type(root, "/pop"));
    expect(calls).toEqual(["send llama3.1:8b", "answer llama3.1:8b", "results llama3.1:8b"]);
  });

  it("keeps the choice when another frame comes into focus", async () => {
    const backend = composerBackend({
      getSettings: () => answer(SETTINGS),
      // Each frame is read as itself, so the newly focused root comes with its own actions.
      frameView: (id, after) =>
        frameViewOf(() => ({
          frame: { ...entry("in_progress"), id },
          messages: [],
          open: [],
          waiting: null,
          seq: 1,
        }))(id, after),
    });
    const root = await mount(backend);
    await choose(root, "llama3.1:8b");
    await mount(backend, "in_progress", root, 0);
    expect(root.querySelector("[data-testid=focused-frame]")?.getAttribute("data-frame-id")).toBe(
      ROOT,
    );
    expect(picker(root).value).toBe("llama3.1:8b");
  });

  it("offers the settings when no model is configured, and lists the models once they are saved", async () => {
    const saved: Settings = { ...SETTINGS, default_model: "gpt-4o", models: [] };
    const root = await mount(
      composerBackend({
        getSettings: () => answer({ ...SETTINGS, default_model: null, models: [] }),
        saveSettings: () => answer(saved),
      }),
    );
    expect(root.querySelector("[data-testid=model-picker]")).toBeNull();
    const missing = root.querySelector<HTMLButtonElement>("[data-testid=model-missing]");
    expect(missing?.textContent).toBe("no model configured — Settings…");
    await act(async () => {
      missing?.click();
      await settle();
    });
    // The dialog reads the settings in its own effect, which runs when the click's act ends.
    await act(settle);
    const dialog = root.querySelector<HTMLFormElement>("[data-testid=settings-dialog]");
    expect(dialog?.querySelector("input[name=default_model]")).not.toBeNull();
    await act(async () => {
      dialog?.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
    expect(root.querySelector("[data-testid=settings-dialog]")).toBeNull();
    expect([...picker(root).options].map((o) => o.value)).toEqual(["gpt-4o"]);
  });
});

describe("a long conversation", () => {
  const ROW = 100;
  const VIEW = 600;
  let restore: () => void = () => undefined;

  afterEach(() => restore());

  /**
   * A stand-in for layout, which the test document lacks: every child of the message list is
   * `ROW` pixels tall, stacked from the top, in a list `VIEW` pixels high that scrolls.
   */
  function layOut(root: HTMLElement): HTMLElement {
    const list = root.querySelector<HTMLElement>("[data-testid=messages]")!;
    let top = 0;
    const height = () => list.children.length * ROW;
    Object.defineProperty(list, "clientHeight", { configurable: true, get: () => VIEW });
    Object.defineProperty(list, "scrollHeight", { configurable: true, get: height });
    Object.defineProperty(list, "scrollTop", {
      configurable: true,
      get: () => top,
      set: (value: number) => (top = Math.max(0, Math.min(value, height() - VIEW))),
    });
    const rects = vi
      .spyOn(HTMLElement.prototype, "getBoundingClientRect")
      .mockImplementation(function (this: HTMLElement) {
        if (this === list) return new DOMRect(0, 0, 400, VIEW);
        if (this.parentElement !== list) return new DOMRect();
        const k = Array.prototype.indexOf.call(list.children, this);
        return new DOMRect(0, k * ROW - top, 400, ROW);
      });
    restore = () => rects.mockRestore();
    return list;
  }

  async function scrollTo(list: HTMLElement, top: number) {
    await act(async () => {
      list.scrollTop = top;
      list.dispatchEvent(new Event("scroll"));
      await settle();
    });
  }

  const drawnIds = (root: HTMLElement) =>
    [...root.querySelectorAll("[data-testid=message]")].map((m) =>
      Number(m.getAttribute("data-message-id")),
    );

  /** A backend over the frame's `stored` messages, which it pages as the real one does. */
  const paged = (stored: Message[]) =>
    fakeBackend({
      frameView: views("in_progress", () => stored),
      earlierMessages: earlierMessagesOf(() => stored),
    });

  function conversation(count: number): Message[] {
    return Array.from({ length: count }, (_, i) =>
      message(i + 1, i % 2 === 0 ? "user" : "assistant", `message number ${i + 1}`),
    );
  }

  it("draws only the newest messages of 5,000, and older ones as the view scrolls up", async () => {
    const stored = conversation(5_000);
    const root = await mount(paged(stored));
    // A bounded number of message elements, the newest last.
    let ids = drawnIds(root);
    expect(ids.length).toBe(WINDOW_SIZE);
    expect(ids.at(-1)).toBe(5_000);
    expect(root.querySelector("[data-testid=earlier-messages]")?.textContent).toBe(
      `${5_000 - WINDOW_SIZE} earlier messages`,
    );

    const list = layOut(root);
    await scrollTo(list, list.scrollHeight);
    const oldest = ids[0]!;
    // Up to the top of what is drawn: older messages come in, newer ones far below go, and the
    // message that was at the top of the view stays where it was.
    await scrollTo(list, 0);
    ids = drawnIds(root);
    expect(ids[0]).toBe(oldest - WINDOW_STEP);
    expect(ids.length).toBeLessThanOrEqual(WINDOW_SIZE);
    const kept = root.querySelector<HTMLElement>(`[data-message-id="${oldest}"]`)!;
    expect(kept.getBoundingClientRect().top).toBe(ROW);
    expect(root.querySelector("[data-testid=newer-messages]")).not.toBeNull();
  });

  it("reads only the newest page of 5,000, and the pages before it as the view nears them", async () => {
    const stored = conversation(5_000);
    const { backend, calls } = countingBackend(paged(stored));
    const views: { kept: number | null; count: number }[] = [];
    const view = backend.frameView;
    backend.frameView = async (id, after) => {
      const read = await view(id, after);
      if (read.status === "ok") {
        views.push({ kept: read.data.kept_through, count: read.data.messages.length });
      }
      return read;
    };
    const root = await mount(backend);
    expect(views).toEqual([{ kept: null, count: MESSAGE_PAGE }]);
    expect(calls.filter((c) => c === "earlierMessages")).toEqual([]);
    const list = layOut(root);
    await scrollTo(list, list.scrollHeight);
    // Up towards the oldest message held: the page before it is read, once, and the window
    // then moves on into it.
    const firstHeld = 5_000 - MESSAGE_PAGE + 1;
    for (let k = 0; k < 20 && drawnIds(root)[0]! >= firstHeld; k++) await scrollTo(list, 0);
    expect(drawnIds(root)[0]).toBeLessThan(firstHeld);
    expect(drawnIds(root).length).toBeLessThanOrEqual(WINDOW_SIZE);
    expect(calls.filter((c) => c === "earlierMessages")).toEqual(["earlierMessages"]);
    expect(root.querySelector("[data-testid=earlier-messages]")?.textContent).toBe(
      `${drawnIds(root)[0]! - 1} earlier messages`,
    );
  });

  // Some hundred renders of a window of messages: more than the default time on a busy machine.
  it("scrolls up to the first message and back down to the newest, the window bounded", async () => {
    const stored = conversation(600);
    const root = await mount(paged(stored));
    const list = layOut(root);
    await scrollTo(list, list.scrollHeight);
    for (let k = 0; k < 200 && drawnIds(root)[0] !== 1; k++) await scrollTo(list, 0);
    const ids = drawnIds(root);
    expect(ids[0]).toBe(1);
    expect(ids.length).toBeLessThanOrEqual(WINDOW_SIZE);
    expect(root.querySelector("[data-testid=earlier-messages]")).toBeNull();
    expect(root.querySelectorAll("[data-testid=message]").length).toBe(ids.length);

    // And back down to the newest.
    for (let k = 0; k < 200 && drawnIds(root).at(-1) !== 600; k++) {
      await scrollTo(list, list.scrollHeight);
    }
    expect(drawnIds(root).at(-1)).toBe(600);
    expect(drawnIds(root).length).toBeLessThanOrEqual(WINDOW_SIZE);
  }, 30_000);

  it("shows earlier messages with its button, without layout", async () => {
    const stored = conversation(300);
    const root = await mount(paged(stored));
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=earlier-messages] button")!.click();
      await settle();
    });
    expect(drawnIds(root)[0]).toBe(300 - WINDOW_SIZE - WINDOW_STEP + 1);
  });

  it("follows a new message at the bottom, and offers the newest to a view scrolled up", async () => {
    const stored = conversation(5_000);
    const backend = paged(stored);
    const root = await mount(backend);
    const list = layOut(root);
    await scrollTo(list, list.scrollHeight);
    const at = (seq: number) => {
      const tree = { ...outline("in_progress"), seq };
      return <Pane backend={backend} tree={tree} frame={tree.frames[1]!} />;
    };

    // At the bottom: a new message is drawn and the view stays at the end.
    stored.push(message(5_001, "assistant", "the newest"));
    await act(async () => {
      render(at(2), root);
      await settle();
    });
    await act(settle);
    expect(drawnIds(root).at(-1)).toBe(5_001);
    expect(drawnIds(root).length).toBeLessThanOrEqual(WINDOW_SIZE);
    expect(list.scrollTop).toBe(list.scrollHeight - VIEW);

    // Scrolled up: the next one waits below, behind a button that shows the newest.
    await scrollTo(list, 0);
    stored.push(message(5_002, "assistant", "newer still"));
    await act(async () => {
      render(at(3), root);
      await settle();
    });
    await act(settle);
    expect(drawnIds(root)).not.toContain(5_002);
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=newer-messages] button")!.click();
      await settle();
    });
    expect(drawnIds(root).at(-1)).toBe(5_002);
    expect(list.scrollTop).toBe(list.scrollHeight - VIEW);
  });

  it("draws the messages around one asked for, and scrolls to it", async () => {
    const stored = conversation(5_000);
    const backend = paged(stored);
    const tree = outline("in_progress");
    const scrolled: string[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.getAttribute("data-message-id") ?? "");
    };
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(
        <Pane
          backend={backend}
          tree={tree}
          frame={tree.frames[1]!}
          messageRequest={{ message: 42 }}
        />,
        root,
      );
      await settle();
    });
    await act(settle);
    const ids = drawnIds(root);
    expect(ids).toContain(42);
    expect(ids.length).toBeLessThanOrEqual(WINDOW_SIZE);
    expect(scrolled).toContain("42");
  });

  it("leaves a request for a message it does not hold to the pane that does", async () => {
    const request: MessageRequest = { message: 4_000 };
    const tree = outline("in_progress");
    const show = async (stored: Message[]) => {
      const root = document.createElement("div");
      document.body.append(root);
      const backend = paged(stored);
      await act(async () => {
        render(
          <Pane backend={backend} tree={tree} frame={tree.frames[1]!} messageRequest={request} />,
          root,
        );
        await settle();
      });
      await act(settle);
      return root;
    };
    // The pane of the tree the search left draws its newest messages, and keeps none of them.
    const before = await show(conversation(10));
    expect(drawnIds(before)).toEqual(conversation(10).map((m) => m.id));
    const after = await show(conversation(5_000));
    expect(drawnIds(after)).toContain(4_000);
    expect(drawnIds(after).length).toBeLessThanOrEqual(WINDOW_SIZE);
  });
});
