import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";

import { App } from "../app";
import type { Backend } from "../backend";
import type {
  Frame_Serialize as Frame,
  SearchHit,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { answer, fakeBackend, outlineFrame, settle } from "../test-backend";
import {
  REVEAL_WAIT_MS,
  SEARCH_DEBOUNCE_MS,
  SEARCH_LIMIT,
  SearchDialog,
  isSearchKey,
  revealMessage,
} from "./search-dialog";

const ROOT = "f0000000001";
const FRAME = "f0000000002";
const OTHER = "f0000000009";

const HITS: SearchHit[] = [
  {
    tree: "t0000000001",
    tree_title: "Build the app",
    frame: FRAME,
    path: ["Build the app", "Design the cache"],
    place: { kind: "results" },
    snippet: [
      { text: "LRU ", matched: false },
      { text: "eviction", matched: true },
      { text: " chosen", matched: false },
    ],
  },
  {
    tree: "t0000000002",
    tree_title: "Another tree",
    frame: OTHER,
    path: ["Root of another", "Notes"],
    place: { kind: "message", id: 42, role: "user" },
    snippet: [
      { text: "<img src=x onerror=alert(1)> ", matched: false },
      { text: "eviction", matched: true },
    ],
  },
];

afterEach(() => {
  vi.useRealTimers();
  document.body.replaceChildren();
});

function query(): HTMLInputElement {
  const input = document.querySelector<HTMLInputElement>("[data-testid=search-query]");
  if (input === null) throw new Error("the search is not open");
  return input;
}

/** Types `text` into the query box, then lets the search it starts answer. */
async function type(text: string) {
  await act(async () => {
    query().value = text;
    query().dispatchEvent(new Event("input", { bubbles: true }));
    await settle();
  });
  // The search starts from an effect, which runs as the `act` above ends.
  await act(settle);
}

async function press(key: string): Promise<boolean> {
  let taken = false;
  await act(async () => {
    const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
    query().dispatchEvent(event);
    taken = event.defaultPrevented;
    await settle();
  });
  return taken;
}

function hits(): HTMLElement[] {
  return Array.from(document.querySelectorAll<HTMLElement>("[data-testid=search-hits] li"));
}

/** The dialog over `backend`, searching as soon as typing stops (no pause). */
async function mountDialog(
  backend: Backend,
  onChoose: (hit: SearchHit) => void = () => {},
  onClose = () => {},
) {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(
      <SearchDialog backend={backend} onChoose={onChoose} onClose={onClose} delay={0} />,
      root,
    );
    await settle();
  });
  return root;
}

describe("the search's keys", () => {
  it("are Ctrl+F and Ctrl+K (or Cmd), without Shift or Alt", () => {
    const key = (init: KeyboardEventInit) => isSearchKey(new KeyboardEvent("keydown", init));
    expect(key({ key: "f", ctrlKey: true })).toBe(true);
    expect(key({ key: "k", ctrlKey: true })).toBe(true);
    expect(key({ key: "K", metaKey: true })).toBe(true);
    expect(key({ key: "f" })).toBe(false);
    expect(key({ key: "F", ctrlKey: true, shiftKey: true })).toBe(false);
    expect(key({ key: "k", ctrlKey: true, altKey: true })).toBe(false);
    expect(key({ key: "p", ctrlKey: true })).toBe(false);
  });
});

describe("the search dialog", () => {
  it("searches once typing pauses, for the words typed last", async () => {
    vi.useFakeTimers();
    const asked: [string, string | null, number | null][] = [];
    const root = document.createElement("div");
    document.body.append(root);
    const backend = fakeBackend({
      search: (words, tree, limit) => {
        asked.push([words, tree, limit]);
        return answer(HITS);
      },
    });
    await act(() => {
      render(<SearchDialog backend={backend} onChoose={() => {}} onClose={() => {}} />, root);
    });
    for (const text of ["e", "ev", "evic"]) {
      await act(() => {
        query().value = text;
        query().dispatchEvent(new Event("input", { bubbles: true }));
      });
      await act(async () => {
        await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS - 1);
      });
    }
    expect(asked).toEqual([]);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(1);
    });
    expect(asked).toEqual([["evic", null, SEARCH_LIMIT]]);
    expect(hits()).toHaveLength(2);
  });

  it("shows each hit's path, tree and snippet with the matched words marked, as text", async () => {
    await mountDialog(fakeBackend({ search: () => answer(HITS) }));
    expect(document.activeElement).toBe(query());
    await type("eviction");
    const [first, second] = hits();
    expect(first?.querySelector("[data-testid=search-path]")?.textContent).toBe(
      "Build the app › Design the cache",
    );
    expect(first?.querySelector("strong")?.textContent).toBe("Design the cache");
    expect(first?.textContent).toContain("title or results");
    expect(first?.textContent).not.toContain("tree Build the app");
    expect(first?.getAttribute("aria-selected")).toBe("true");
    expect(second?.textContent).toContain("your message · tree Another tree");
    const snippet = second?.querySelector("[data-testid=search-snippet]");
    expect(snippet?.textContent).toBe("<img src=x onerror=alert(1)> eviction");
    expect(snippet?.querySelector("img")).toBeNull();
    expect(
      Array.from(snippet?.querySelectorAll(".search-match") ?? []).map((m) => m.textContent),
    ).toEqual(["eviction"]);
  });

  it("moves with Up and Down, chooses with Enter and closes", async () => {
    const chosen: SearchHit[] = [];
    let closed = 0;
    await mountDialog(
      fakeBackend({ search: () => answer(HITS) }),
      (hit) => chosen.push(hit),
      () => closed++,
    );
    await type("eviction");
    expect(await press("ArrowDown")).toBe(true);
    expect(hits()[1]?.getAttribute("aria-selected")).toBe("true");
    expect(query().getAttribute("aria-activedescendant")).toBe(hits()[1]?.id);
    // Down from the last hit wraps to the first.
    await press("ArrowDown");
    expect(hits()[0]?.getAttribute("aria-selected")).toBe("true");
    await press("ArrowUp");
    await press("Enter");
    expect(chosen).toEqual([HITS[1]]);
    expect(closed).toBe(1);
  });

  it("closes on Escape without choosing, and a click chooses", async () => {
    const chosen: SearchHit[] = [];
    let closed = 0;
    await mountDialog(
      fakeBackend({ search: () => answer(HITS) }),
      (hit) => chosen.push(hit),
      () => closed++,
    );
    await type("eviction");
    await press("Escape");
    expect(closed).toBe(1);
    expect(chosen).toEqual([]);
    await act(async () => {
      hits()[0]?.click();
      await settle();
    });
    expect(chosen).toEqual([HITS[0]]);
  });

  it("says when nothing is found, and shows the backend's refusal", async () => {
    await mountDialog(
      fakeBackend({
        search: (words) =>
          words.length > 10
            ? answer<SearchHit[]>({ code: "invalid", message: "the search is 11 characters long" })
            : answer<SearchHit[]>([]),
      }),
    );
    await type("nothing");
    expect(document.querySelector("[data-testid=search-empty]")?.textContent).toBe(
      "Nothing found for “nothing”.",
    );
    await type("x".repeat(11));
    const error = document.querySelector("[data-testid=search-error]");
    expect(error?.getAttribute("data-code")).toBe("invalid");
    expect(error?.textContent).toBe("the search is 11 characters long");
    await type("   ");
    expect(hits()).toEqual([]);
    expect(document.querySelector("[data-testid=search-error]")).toBeNull();
  });
});

describe("a chosen message", () => {
  it("is waited for, brought into view and marked", async () => {
    const stop = revealMessage(42);
    const element = document.createElement("article");
    element.dataset.messageId = "42";
    const scrolled = vi.fn();
    element.scrollIntoView = scrolled;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(scrolled).not.toHaveBeenCalled();
    document.body.append(element);
    await vi.waitFor(() => expect(scrolled).toHaveBeenCalled(), { timeout: REVEAL_WAIT_MS });
    expect(scrolled).toHaveBeenCalledWith({ block: "center" });
    expect(element.classList.contains("search-revealed")).toBe(true);
    stop();
  });
});

const OUTLINE: TreeOutline = {
  tree: {
    id: "t0000000001",
    title: "Build the app",
    root: ROOT,
    focus: ROOT,
    created_at: 0,
    workspace: null,
  },
  frames: [outlineFrame(ROOT, null, { title: "Build the app" }), outlineFrame(FRAME, ROOT)],
  seq: 3,
};

describe("the search in the window", () => {
  it("opens with Ctrl+K and Ctrl+F, and a chosen hit's frame is focused", async () => {
    const focused: string[] = [];
    const root = document.createElement("div");
    document.body.append(root);
    const backend = fakeBackend({
      outline: () => answer(OUTLINE),
      search: () => answer(HITS),
      focusFrame: (id) => {
        focused.push(id);
        return answer<Frame>({ code: "not_found", message: "gone" });
      },
    });
    await act(async () => {
      render(<App backend={backend} />, root);
      await settle();
    });
    for (const key of ["k", "f"]) {
      await act(async () => {
        document.body.dispatchEvent(
          new KeyboardEvent("keydown", { key, ctrlKey: true, bubbles: true, cancelable: true }),
        );
        await settle();
      });
      expect(root.querySelector("[data-testid=search-dialog]")).not.toBeNull();
      await press("Escape");
      expect(root.querySelector("[data-testid=search-dialog]")).toBeNull();
    }
    await act(async () => {
      document.body.dispatchEvent(
        new KeyboardEvent("keydown", { key: "k", ctrlKey: true, bubbles: true }),
      );
      await settle();
    });
    await type("eviction");
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, SEARCH_DEBOUNCE_MS + 50));
      await settle();
    });
    await press("ArrowDown");
    await press("Enter");
    expect(focused).toEqual([OTHER]);
    expect(root.querySelector("[data-testid=search-dialog]")).toBeNull();
    // The refusal is shown like any other.
    expect(root.querySelector("[data-testid=operation-error]")?.textContent).toContain("gone");
  });
});
