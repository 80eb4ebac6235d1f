import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import { App } from "./app";
import type { Backend } from "./backend";
import type {
  ApiError,
  AppInfo,
  FrameOutline_Serialize,
  ImportSummary,
  TreeOutline_Serialize,
} from "./bindings";
import type { PreviewOutline } from "./outline";
import { INFO, NO_TREE, answer, fakeBackend, outlineFrame, settle } from "./test-backend";

function frame(
  id: string,
  parent: string | null,
  position: number,
  title: string,
): FrameOutline_Serialize {
  return outlineFrame(id, parent, {
    position,
    title,
    status: parent === null ? "in_progress" : "planned",
  });
}

const OUTLINE: TreeOutline_Serialize = {
  tree: {
    id: "t0000000001",
    title: "Build the app",
    root: "f0000000001",
    focus: "f0000000002",
    created_at: 0,
    workspace: null,
  },
  frames: [
    frame("f0000000001", null, 0, "Build the app"),
    frame("f0000000002", "f0000000001", 0, "Design"),
  ],
  seq: 3,
};

async function mount(backend: Backend): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<App backend={backend} />, root);
    await settle();
  });
  // The outline is read after the app info arrives: give that second round its own turn.
  await act(settle);
  return root;
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("App", () => {
  it("shows both panes and the data directory the backend reports", async () => {
    const root = await mount(fakeBackend({}));
    expect(root.querySelector("[data-testid=graph-pane]")).not.toBeNull();
    expect(root.querySelector("[data-testid=chat-pane]")).not.toBeNull();
    expect(root.querySelector("[data-testid=data-dir]")?.textContent).toBe("/tmp/flame-home");
    expect(root.textContent).toContain("from FLAME_HOME");
    expect(root.textContent).toContain("schema v1");
  });

  it("says where the default location came from", async () => {
    const root = await mount(
      fakeBackend({ appInfo: () => answer({ ...INFO, data_dir_source: "platform" }) }),
    );
    expect(root.textContent).toContain("default location");
  });

  it("shows the startup error instead of the panes", async () => {
    const root = await mount(
      fakeBackend({
        appInfo: () =>
          answer<AppInfo>({
            code: "database_unreadable",
            message: "/x/flame.db is not a Flame database",
          }),
      }),
    );
    const alert = root.querySelector("[role=alert]");
    expect(alert?.getAttribute("data-code")).toBe("database_unreadable");
    expect(alert?.textContent).toContain("Flame cannot read its database");
    expect(alert?.textContent).toContain("/x/flame.db is not a Flame database");
    expect(root.querySelector("[data-testid=graph-pane]")).toBeNull();
  });

  it("shows the startup error once the backend finds the open database damaged", async () => {
    let announce: (error: ApiError) => void = () => undefined;
    const root = await mount(
      fakeBackend({
        outline: () => answer(OUTLINE),
        onDatabaseDamaged: (listener) => {
          announce = listener;
          return Promise.resolve(() => undefined);
        },
      }),
    );
    expect(root.querySelector("[data-testid=graph-pane]")).not.toBeNull();
    await act(async () => {
      announce({
        code: "database_unreadable",
        message: "the database at /x/flame.db is damaged; SQLite found: page 7 is never used",
      });
      await settle();
    });
    const alert = root.querySelector("[role=alert]");
    expect(alert?.getAttribute("data-code")).toBe("database_unreadable");
    expect(alert?.textContent).toContain("is damaged; SQLite found: page 7");
    expect(root.querySelector("[data-testid=graph-pane]")).toBeNull();
  });

  it("says it is opening until the backend answers", async () => {
    const root = await mount(fakeBackend({ appInfo: () => new Promise(() => undefined) }));
    expect(root.querySelector(".status-bar")?.textContent).toContain("Opening");
  });

  it("offers to create a tree when there is none, and draws the one it creates", async () => {
    let created: [string, string, string | null] | null = null;
    let outline: TreeOutline_Serialize | ApiError = NO_TREE;
    const root = await mount(
      fakeBackend({
        outline: () => answer<TreeOutline_Serialize>(outline),
        createTree: (title, criteria, workspace) => {
          created = [title, criteria, workspace];
          outline = OUTLINE;
          return answer(OUTLINE.tree);
        },
      }),
    );
    const form = root.querySelector<HTMLFormElement>("[data-testid=new-tree-form]");
    expect(form).not.toBeNull();
    await act(async () => {
      const title = form!.querySelector<HTMLInputElement>("input[name=title]")!;
      title.value = "Build the app";
      title.dispatchEvent(new Event("input"));
      const criteria = form!.querySelector<HTMLTextAreaElement>("textarea[name=criteria]")!;
      criteria.value = "It works";
      criteria.dispatchEvent(new Event("input"));
      await settle();
    });
    await act(async () => {
      form!.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
    expect(created).toEqual(["Build the app", "It works", null]);
    expect(root.querySelector("[data-testid=new-tree-form]")).toBeNull();
    expect(root.querySelector("[data-testid=flame-graph]")).not.toBeNull();
  });

  it("names the focused frame above the chat and mirrors the tree for assistive technology", async () => {
    const root = await mount(fakeBackend({ outline: () => answer(OUTLINE) }));
    const header = root.querySelector("[data-testid=focused-frame]");
    expect(header?.getAttribute("data-frame-id")).toBe("f0000000002");
    expect(header?.textContent).toContain("Design");
    expect(header?.textContent).toContain("planned");
    const items = [...root.querySelectorAll("[role=treeitem]")];
    expect(items.map((i) => i.getAttribute("data-frame-id"))).toEqual([
      "f0000000001",
      "f0000000002",
    ]);
    expect(items[1]?.getAttribute("aria-level")).toBe("2");
    expect(items[1]?.getAttribute("aria-current")).toBe("true");
  });

  it("draws the outline asked for before it started, without asking again", async () => {
    let reads = 0;
    let announce: (seq: number) => void = () => undefined;
    const backend = fakeBackend({
      outline: () => {
        reads += 1;
        return answer({ ...OUTLINE, seq: 4 });
      },
      onTreeChanged: (listener) => {
        announce = listener;
        return Promise.resolve(() => undefined);
      },
    });
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(<App backend={backend} firstOutline={answer(OUTLINE)} />, root);
      await settle();
    });
    await act(settle);
    const header = root.querySelector("[data-testid=focused-frame]");
    expect(header?.getAttribute("data-frame-id")).toBe("f0000000002");
    expect(reads).toBe(0);
    // Later loads ask the backend.
    await act(async () => {
      announce(4);
      await settle();
    });
    expect(reads).toBe(1);
  });

  it("draws a large tree's preview until its outline comes, and acts on nothing meanwhile", async () => {
    let focused = 0;
    let give: (outline: TreeOutline_Serialize) => void = () => undefined;
    const whole = new Promise<{ status: "ok"; data: TreeOutline_Serialize }>((resolve) => {
      give = (data) => resolve({ status: "ok", data });
    });
    const backend = fakeBackend({
      focusFrame: () => {
        focused++;
        return answer(null as never);
      },
    });
    const preview = {
      outline: { ...OUTLINE, frames: OUTLINE.frames.slice(0, 1) },
      wholeFrames: 20_000,
    };
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(<App backend={backend} firstOutline={whole} firstPreview={answer(preview)} />, root);
      await settle();
    });
    await act(settle);
    const items = () =>
      [...root.querySelectorAll("[role=treeitem]")].map((e) => e.getAttribute("data-frame-id"));
    expect(items()).toEqual(["f0000000001"]);
    expect(root.textContent).not.toContain("Reading the tree");
    const note = () => root.querySelector("[data-testid=preview-note]")?.textContent;
    expect(note()).toBe("Reading all 20,000 frames…");
    expect(root.querySelector("[data-testid=weight-mode]")).toBeNull();
    expect(root.querySelector("[data-testid=focused-frame]")).toBeNull();
    // A frame of the preview picked while the rest of the window has no tree does nothing.
    await act(async () => {
      root.querySelector<HTMLElement>("[role=treeitem]")?.click();
      await settle();
    });
    expect(focused).toBe(0);
    // The outline replaces the preview, in the same graph.
    const graph = root.querySelector("[data-testid=flame-graph]");
    await act(async () => {
      give(OUTLINE);
      await settle();
    });
    await act(settle);
    expect(items()).toEqual(["f0000000001", "f0000000002"]);
    expect(root.querySelector("[data-testid=flame-graph]")).toBe(graph);
    expect(root.querySelector("[data-testid=focused-frame]")).not.toBeNull();
    expect(note()).toBeUndefined();
  });

  it("draws no preview that comes after the outline", async () => {
    type Late = { status: "ok"; data: PreviewOutline | null };
    let give: (answer: Late) => void = () => undefined;
    const late = new Promise<Late>((resolve) => {
      give = resolve;
    });
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(
        <App backend={fakeBackend({})} firstOutline={answer(OUTLINE)} firstPreview={late} />,
        root,
      );
      await settle();
    });
    await act(async () => {
      give({
        status: "ok",
        data: { outline: { ...OUTLINE, frames: OUTLINE.frames.slice(0, 1) }, wholeFrames: 9 },
      });
      await settle();
    });
    const items = [...root.querySelectorAll("[role=treeitem]")];
    expect(items.map((e) => e.getAttribute("data-frame-id"))).toEqual([
      "f0000000001",
      "f0000000002",
    ]);
  });

  it("reloads the tree when the backend announces a newer change, not an older one", async () => {
    let reads = 0;
    let announce: (seq: number) => void = () => undefined;
    await mount(
      fakeBackend({
        outline: () => {
          reads++;
          return answer(OUTLINE);
        },
        onTreeChanged: (listener) => {
          announce = listener;
          return Promise.resolve(() => undefined);
        },
      }),
    );
    expect(reads).toBe(1);
    await act(async () => {
      announce(2);
      await settle();
    });
    expect(reads).toBe(1);
    await act(async () => {
      announce(9);
      await settle();
    });
    expect(reads).toBe(2);
  });

  it("imports a path from the header, shows progress and a refusal in place, then the tree", async () => {
    let outline: TreeOutline_Serialize | ApiError = NO_TREE;
    const asked: string[] = [];
    let finish: () => void = () => undefined;
    const summary: ImportSummary = {
      tree: OUTLINE.tree,
      frames: 2,
      messages: 7,
      records: 9,
      merged_records: 1,
      skipped: [],
      // The first problems are listed and the rest counted: the count is of them all.
      problems: [
        "s.jsonl line 3: truncated (the file ends inside a record); line skipped",
        "and 4 more",
      ],
      problem_count: 5,
    };
    const root = await mount(
      fakeBackend({
        outline: () => answer<TreeOutline_Serialize>(outline),
        importFile: (path, onProgress) => {
          asked.push(path);
          if (path === "/nope") {
            return answer<ImportSummary>({ code: "not_found", message: "cannot read /nope" });
          }
          onProgress({ file: "s.jsonl", bytes_read: 50, total_bytes: 200 });
          return new Promise((resolve) => {
            finish = () => {
              outline = OUTLINE;
              resolve({ status: "ok", data: summary });
            };
          });
        },
      }),
    );
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=import-button]")!.click();
      await settle();
    });
    const form = root.querySelector<HTMLFormElement>("[data-testid=import-form]")!;
    const type = async (text: string) =>
      act(async () => {
        const input = form.querySelector<HTMLInputElement>("input[name=path]")!;
        input.value = text;
        input.dispatchEvent(new Event("input"));
        await settle();
      });
    const submit = async () =>
      act(async () => {
        form.dispatchEvent(new Event("submit", { cancelable: true }));
        await settle();
      });
    await type("/nope");
    await submit();
    expect(form.querySelector("[role=alert]")?.textContent).toBe("cannot read /nope");
    await type("/s.jsonl");
    await submit();
    expect(root.querySelector("[data-testid=import-progress]")?.textContent).toBe(
      "Reading s.jsonl: 25%",
    );
    await act(async () => {
      finish();
      await settle();
    });
    expect(asked).toEqual(["/nope", "/s.jsonl"]);
    const shown = root.querySelector("[data-testid=import-summary]")?.textContent;
    expect(shown).toContain("2 frames, 7 messages");
    expect(shown).toContain("5 parts could not be read");
    expect(root.querySelector("[data-testid=flame-graph]")).not.toBeNull();
    await submit();
    expect(root.querySelector("[data-testid=import-form]")).toBeNull();
  });
});
