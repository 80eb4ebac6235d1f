import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import { App } from "../app";
import type { Backend } from "../backend";
import type {
  FrameDetail_Serialize as FrameDetail,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import {
  IN_PROGRESS_ACTIONS,
  NO_FILES,
  answer,
  fakeBackend,
  outlineFrame,
  settle,
} from "../test-backend";
import type { PaletteAction, PaletteContext } from "./actions";
import { CommandPalette, MAX_SHOWN, isPaletteKey, offered } from "./palette";

const ROOT = "f0000000001";
const FRAME = "f0000000002";

const OUTLINE: TreeOutline = {
  tree: {
    id: "t0000000001",
    title: "Build the app",
    root: ROOT,
    focus: FRAME,
    created_at: 0,
    workspace: null,
  },
  frames: [
    outlineFrame(ROOT, null, { title: "Build the app" }),
    outlineFrame(FRAME, ROOT, { title: "Design" }),
  ],
  seq: 3,
};

const DETAIL: FrameDetail = {
  ...outlineFrame(FRAME, ROOT, { title: "Design" }),
  tree: "t0000000001",
  created_at: 0,
  success_criteria: "A plan exists",
  status_reason: null,
  results: null,
  results_compacted: null,
  artifacts: [],
  decisions: [],
  log_path: "/tmp/log.md",
  actions: IN_PROGRESS_ACTIONS,
  files: NO_FILES,
};

afterEach(() => {
  document.body.replaceChildren();
});

/** The window over `backend`, with the tree read. */
async function mountApp(backend: Backend): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<App backend={backend} />, root);
    await settle();
  });
  await act(settle);
  return root;
}

function pressPaletteKey() {
  document.body.dispatchEvent(
    new KeyboardEvent("keydown", {
      key: "P",
      code: "KeyP",
      ctrlKey: true,
      shiftKey: true,
      bubbles: true,
    }),
  );
}

function query(): HTMLInputElement {
  const input = document.querySelector<HTMLInputElement>("[data-testid=palette-query]");
  if (input === null) throw new Error("the palette is not open");
  return input;
}

async function type(text: string) {
  await act(async () => {
    query().value = text;
    query().dispatchEvent(new Event("input", { bubbles: true }));
    await settle();
  });
}

/** Presses `key` in the query box; returns whether the palette took it (prevented its default). */
async function press(key: string, more: KeyboardEventInit = {}): Promise<boolean> {
  let taken = false;
  await act(async () => {
    const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...more });
    query().dispatchEvent(event);
    taken = event.defaultPrevented;
    await settle();
  });
  return taken;
}

function options(): HTMLElement[] {
  return Array.from(document.querySelectorAll<HTMLElement>("[data-testid=palette-options] li"));
}

function labels(): string[] {
  return options().map((o) => o.querySelector(".palette-label")?.textContent ?? "");
}

describe("the palette's key", () => {
  it("is Ctrl+Shift+P or Cmd+Shift+P, nothing else", () => {
    const key = (init: KeyboardEventInit) => isPaletteKey(new KeyboardEvent("keydown", init));
    expect(key({ key: "P", code: "KeyP", ctrlKey: true, shiftKey: true })).toBe(true);
    expect(key({ key: "P", code: "KeyP", metaKey: true, shiftKey: true })).toBe(true);
    expect(key({ key: "p", code: "KeyP", ctrlKey: true })).toBe(false);
    expect(key({ key: "P", code: "KeyP", shiftKey: true })).toBe(false);
    expect(key({ key: "P", code: "KeyP", ctrlKey: true, shiftKey: true, altKey: true })).toBe(
      false,
    );
  });
});

describe("the palette in the window", () => {
  it("opens with Ctrl+Shift+P, and Enter on “sett” opens the settings", async () => {
    const root = await mountApp(
      fakeBackend({
        outline: () => answer(OUTLINE),
        frameDetail: () => answer(DETAIL),
      }),
    );
    expect(root.querySelector("[data-testid=palette]")).toBeNull();
    await act(async () => {
      pressPaletteKey();
      await settle();
    });
    const dialog = root.querySelector("[data-testid=palette]");
    expect(dialog?.getAttribute("role")).toBe("dialog");
    expect(document.activeElement).toBe(query());
    await type("sett");
    expect(labels()[0]).toBe("Settings…");
    expect(options()[0]?.querySelector("mark")?.textContent).toBe("Sett");
    await press("Enter");
    expect(root.querySelector("[data-testid=palette]")).toBeNull();
    expect(root.querySelector("[data-testid=settings-dialog]")).not.toBeNull();
  });

  it("focuses a frame found by its title", async () => {
    const focused: string[] = [];
    await mountApp(
      fakeBackend({
        outline: () => answer(OUTLINE),
        frameDetail: () => answer(DETAIL),
        focusFrame: (id) => {
          focused.push(id);
          return answer(DETAIL);
        },
      }),
    );
    await act(async () => {
      pressPaletteKey();
      await settle();
    });
    await type("build the app");
    expect(labels()[0]).toBe("Focus: Build the app");
    await press("Enter");
    expect(focused).toEqual([ROOT]);
  });

  it("shows and hides the context inspector, and pops through the window's pop dialog", async () => {
    const root = await mountApp(
      fakeBackend({
        outline: () => answer(OUTLINE),
        frameDetail: () => answer(DETAIL),
      }),
    );
    const run = async (text: string) => {
      await act(async () => {
        pressPaletteKey();
        await settle();
      });
      await type(text);
      await press("Enter");
    };
    await run("context inspector");
    expect(root.querySelector("[data-testid=context-inspector]")).not.toBeNull();
    expect(root.querySelector("[data-testid=inspector-toggle]")?.getAttribute("aria-pressed")).toBe(
      "true",
    );
    await run("context inspector");
    expect(root.querySelector("[data-testid=context-inspector]")).toBeNull();
    await run("pop");
    expect(root.querySelector("[data-testid=pop-dialog]")).not.toBeNull();
  });

  it("greys what the backend would refuse, and Enter does not run it", async () => {
    const started: string[] = [];
    const root = await mountApp(
      fakeBackend({
        outline: () => answer(OUTLINE),
        frameDetail: () => answer(DETAIL),
        startFrame: (id) => {
          started.push(id);
          return answer(DETAIL);
        },
      }),
    );
    await act(async () => {
      pressPaletteKey();
      await settle();
    });
    await type("resume");
    const resume = options().find((o) => o.dataset["action"] === "frame.resume");
    expect(resume?.getAttribute("aria-disabled")).toBe("true");
    expect(resume?.textContent).toContain("Not allowed now for “Design”, which is in progress");
    // Only the greyed entry matches, so Enter has nothing to run and the palette stays.
    expect(options().every((o) => o.getAttribute("aria-disabled") === "true")).toBe(true);
    await press("Enter");
    expect(root.querySelector("[data-testid=palette]")).not.toBeNull();
    expect(started).toEqual([]);
  });
});

/** The palette's window: handlers that write what they were asked to `calls`, and `frames` more frames. */
function paletteContext(calls: string[], frames = 0): Omit<PaletteContext, "allowed" | "trees"> {
  const outline: TreeOutline = {
    ...OUTLINE,
    frames: [
      ...OUTLINE.frames,
      ...Array.from({ length: frames }, (_, i) =>
        outlineFrame(`f1${String(i).padStart(9, "0")}`, ROOT, { title: `Step ${i}`, position: i }),
      ),
    ],
  };
  const log = (name: string) => () => void calls.push(name);
  return {
    outline,
    mode: "tokens",
    modes: [{ mode: "tokens", label: "Tokens" }],
    request: (request) => void calls.push(`${request.kind} ${request.frame.id}`),
    focus: (id) => void calls.push(`focus ${id}`),
    openTree: log("openTree"),
    newTree: log("newTree"),
    deleteTree: log("deleteTree"),
    chooseWorkspace: log("chooseWorkspace"),
    removeWorkspace: log("removeWorkspace"),
    importFile: log("importFile"),
    openSessions: log("openSessions"),
    openSettings: log("openSettings"),
    setMode: log("setMode"),
    colour: "status",
    setColour: log("setColour"),
    togglePanel: log("togglePanel"),
    search: null,
  };
}

async function mountPalette(calls: string[], frames = 0): Promise<{ closed: () => number }> {
  let closed = 0;
  const root = document.createElement("div");
  document.body.append(root);
  const backend = fakeBackend({ frameDetail: () => answer(DETAIL) });
  await act(async () => {
    render(
      <CommandPalette
        backend={backend}
        context={paletteContext(calls, frames)}
        onClose={() => (closed += 1)}
      />,
      root,
    );
    await settle();
  });
  return { closed: () => closed };
}

describe("the palette", () => {
  it("moves the highlight with Up and Down, wrapping, and says which option it is", async () => {
    await mountPalette([]);
    await type("e");
    // "e" matches many entries.
    const first = options()[0]!;
    expect(first.getAttribute("aria-selected")).toBe("true");
    expect(query().getAttribute("aria-activedescendant")).toBe(first.id);
    expect(await press("ArrowDown")).toBe(true);
    expect(options()[1]?.getAttribute("aria-selected")).toBe("true");
    expect(query().getAttribute("aria-activedescendant")).toBe(options()[1]?.id);
    await press("ArrowUp");
    await press("ArrowUp");
    const last = options()[options().length - 1]!;
    expect(last.getAttribute("aria-selected")).toBe("true");
    expect(query().getAttribute("aria-controls")).toBe(
      document.querySelector("[role=listbox]")?.id,
    );
  });

  it("runs the highlighted entry on Enter, after closing", async () => {
    const calls: string[] = [];
    const palette = await mountPalette(calls);
    await type("push");
    await press("Enter");
    expect(calls).toEqual([`push ${FRAME}`]);
    expect(palette.closed()).toBe(1);
  });

  it("runs an entry that is clicked", async () => {
    const calls: string[] = [];
    await mountPalette(calls);
    await type("import");
    await act(async () => {
      options()[0]?.click();
      await settle();
    });
    expect(calls).toEqual(["importFile"]);
  });

  it("closes on Escape and gives the focus back to where it was", async () => {
    const button = document.createElement("button");
    document.body.append(button);
    button.focus();
    const calls: string[] = [];
    const palette = await mountPalette(calls);
    expect(document.activeElement).toBe(query());
    expect(await press("Escape")).toBe(true);
    expect(palette.closed()).toBe(1);
    expect(calls).toEqual([]);
    expect(document.activeElement).toBe(button);
  });

  it("keeps the focus in the query box on Tab", async () => {
    await mountPalette([]);
    expect(await press("Tab")).toBe(true);
    expect(await press("Tab", { shiftKey: true })).toBe(true);
    expect(document.activeElement).toBe(query());
  });

  it("says when nothing matches", async () => {
    await mountPalette([]);
    await type("qqqqq");
    expect(options()).toHaveLength(0);
    expect(document.querySelector("[data-testid=palette-empty]")?.textContent).toContain("qqqqq");
  });

  it("draws at most MAX_SHOWN entries and counts the rest", async () => {
    await mountPalette([], MAX_SHOWN + 50);
    await type("focus step");
    // The frames, the root and the focused one among them, all match "focus".
    expect(options()).toHaveLength(MAX_SHOWN);
    expect(document.querySelector("[data-testid=palette-more]")?.textContent).toBe(
      "50 more; type to narrow them.",
    );
    await type("focus step 149");
    expect(labels()[0]).toBe("Focus: Step 149");
  });

  it("lists what can be done before what cannot, each by rank", () => {
    const entry = (id: string, label: string, disabled: string | null): PaletteAction => ({
      id,
      label,
      detail: null,
      shortcut: [],
      disabled,
      run: () => undefined,
    });
    const ranked = offered("pop", [
      entry("a", "Pop…", "not now"),
      entry("b", "Plan child: open a pad", null),
    ]);
    expect(ranked.map((r) => r.item.id)).toEqual(["b", "a"]);
  });
});
