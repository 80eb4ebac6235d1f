// How many times the window calls the backend when a message is stored: the reply's `saved`
// event and the data directory's change event both announce it, and the window reads the frame
// once for the two (issue 14 §5).

import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import { App } from "./app";
import type { ChatListener } from "./backend";
import type {
  ChatOutcome,
  FrameDetail_Serialize as FrameDetail,
  Message_Serialize as Message,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";
import {
  IN_PROGRESS_ACTIONS,
  type StoredFrame,
  answer,
  countingBackend,
  fakeBackend,
  frameViewOf,
  outlineFrame,
  NO_FILES,
  settle,
  storedMessage,
} from "./test-backend";
import { NO_TOKENS } from "./test-costs";

const ROOT = "f0000000001";

const ENTRY: FrameDetail = {
  ...outlineFrame(ROOT, null, { title: "Chat" }),
  tree: "t0000000001",
  created_at: 0,
  success_criteria: "It is answered",
  status_reason: null,
  results: null,
  results_compacted: null,
  artifacts: [],
  decisions: [],
  log_path: "/tmp/log.md",
  actions: IN_PROGRESS_ACTIONS,
  files: NO_FILES,
};

function stored(id: number, role: Message["role"], content: string): Message {
  return storedMessage(id, ROOT, role, content);
}

/**
 * A data directory with one tree, whose root is focused, and the window's backend over it:
 * `store` adds a message as the agent does (a new event seq), `announce` sends the saved event
 * and `changed` the data directory's change event; `calls` logs every backend call.
 */
function setUp() {
  const frame: StoredFrame = { frame: ENTRY, messages: [], open: [], waiting: null, seq: 1 };
  const outline = (): TreeOutline => ({
    tree: {
      id: "t0000000001",
      title: "Chat",
      root: ROOT,
      focus: ROOT,
      created_at: 0,
      workspace: null,
    },
    frames: [outlineFrame(ROOT, null, { message_count: frame.messages.length })],
    seq: frame.seq,
  });
  let onChange: (seq: number) => void = () => undefined;
  let listener: ChatListener = () => undefined;
  let finish: (outcome: ChatOutcome) => void = () => undefined;
  const { backend, calls } = countingBackend(
    fakeBackend({
      outline: () => answer(outline()),
      frameView: frameViewOf(() => frame),
      onTreeChanged: (listen) => {
        onChange = listen;
        return Promise.resolve(() => undefined);
      },
      sendMessage: (_frame, _text, _model, onEvent) => {
        listener = onEvent;
        return new Promise((resolve) => (finish = (data) => resolve({ status: "ok", data })));
      },
    }),
  );
  return {
    backend,
    calls,
    frame,
    store(message: Message) {
      frame.messages = [...frame.messages, message];
      frame.seq += 1;
    },
    announce: (message: number) => listener({ kind: "saved", frame: ROOT, message }),
    changed: () => onChange(frame.seq),
    finish: () =>
      finish({
        frame: ROOT,
        rounds: 1,
        stopped: { kind: "finished" },
        usage: { ...NO_TOKENS, input_tokens: 1, output_tokens: 1 },
      }),
  };
}

async function mount(backend: ReturnType<typeof setUp>["backend"]): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<App backend={backend} />, root);
    await settle();
  });
  await act(settle);
  await act(settle);
  return root;
}

async function send(root: HTMLElement, text: string) {
  const box = root.querySelector<HTMLTextAreaElement>("textarea[name=message]");
  if (box === null) throw new Error("no composer");
  await act(async () => {
    box.value = text;
    box.dispatchEvent(new Event("input"));
    await settle();
  });
  await act(async () => {
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await settle();
  });
}

/** The calls in `calls` from `from` on that read something, counted by name. */
function reads(calls: string[], from: number): Record<string, number> {
  const counted: Record<string, number> = {};
  for (const name of calls.slice(from)) counted[name] = (counted[name] ?? 0) + 1;
  return counted;
}

const shown = (root: HTMLElement) =>
  [...root.querySelectorAll("[data-testid=message]")].map((m) => m.textContent);

afterEach(() => {
  document.body.replaceChildren();
});

describe("a stored message", () => {
  it("is read once by the chat pane, though it is announced twice", async () => {
    const world = setUp();
    const root = await mount(world.backend);
    await send(root, "hello");
    const before = world.calls.length;
    await act(async () => {
      world.store(stored(1, "user", "hello"));
      world.announce(1);
      await settle();
    });
    // The change event comes later (the data directory is polled), when the read has ended.
    await act(async () => {
      world.changed();
      await settle();
    });
    await act(settle);
    // The outline and the tree list are the flame graph's and the tree menu's reads.
    expect(reads(world.calls, before)).toEqual({ frameView: 1, outline: 1, listTrees: 1 });
    expect(shown(root)).toEqual([expect.stringContaining("hello")]);
  });

  it("is appended to the messages held, which are not read again", async () => {
    const world = setUp();
    world.store(stored(1, "user", "first"));
    world.store(stored(2, "assistant", "second"));
    const views: (number | null)[] = [];
    const view = world.backend.frameView;
    world.backend.frameView = (id, after) => {
      views.push(after);
      return view(id, after);
    };
    const root = await mount(world.backend);
    expect(shown(root)).toHaveLength(2);
    await send(root, "third");
    await act(async () => {
      world.store(stored(3, "user", "third"));
      world.announce(3);
      world.changed();
      await settle();
    });
    await act(settle);
    expect(views).toEqual([null, 2]);
    const texts = shown(root);
    expect(texts).toHaveLength(3);
    expect(texts[2]).toContain("third");
  });

  it("announced while a read runs costs one more read, however often it is announced", async () => {
    const world = setUp();
    const root = await mount(world.backend);
    await send(root, "hello");
    // Reads see the store as it is when they are made, and answer when the test lets them.
    const pending: (() => void)[] = [];
    const view = world.backend.frameView;
    world.backend.frameView = (id, after) => {
      const answered = view(id, after);
      return new Promise((resolve) => pending.push(() => void answered.then(resolve)));
    };
    const before = world.calls.length;
    await act(async () => {
      world.store(stored(1, "user", "hello"));
      world.announce(1);
      await settle();
    });
    expect(pending).toHaveLength(1);
    await act(async () => {
      world.store(stored(2, "note", "a note from elsewhere"));
      world.announce(2);
      world.changed();
      world.changed();
      await settle();
    });
    // No read starts while one runs.
    expect(pending).toHaveLength(1);
    await act(async () => {
      pending[0]?.();
      await settle();
    });
    expect(pending).toHaveLength(2);
    await act(async () => {
      pending[1]?.();
      await settle();
    });
    await act(settle);
    expect(pending).toHaveLength(2);
    expect(reads(world.calls, before)["frameView"]).toBe(2);
    expect(shown(root)).toHaveLength(2);
  });

  it("is read again while it is an open reply, and shown finished once it is", async () => {
    const world = setUp();
    world.store(stored(1, "user", "question"));
    world.store({ ...stored(2, "assistant", "half an"), interrupted: true });
    world.frame.open = [2];
    const root = await mount(world.backend);
    expect(shown(root)[1]).toContain("half an");
    world.frame.messages = [stored(1, "user", "question"), stored(2, "assistant", "whole answer")];
    world.frame.open = [];
    world.frame.seq += 1;
    await act(async () => {
      world.changed();
      await settle();
    });
    await act(settle);
    const texts = shown(root);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toContain("whole answer");
    expect(root.querySelector(".interrupted")).toBeNull();
  });
});
