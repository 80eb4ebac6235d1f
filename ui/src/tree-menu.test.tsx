import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Answer, Backend } from "./backend";
import type {
  ApiError,
  DeletedTree,
  Frame_Serialize as Frame,
  Tree_Serialize as Tree,
  TreeListEntry_Serialize as TreeListEntry,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";
import { answer, fakeBackend, settle } from "./test-backend";
import { TreeMenu } from "./tree-menu";
import { App } from "./app";

function tree(n: number, title: string): Tree {
  return {
    id: `t000000000${n}`,
    title,
    root: `f000000000${n}`,
    focus: `f00000000${n}9`,
    created_at: n,
    workspace: null,
  };
}

const SAMPLE = tree(1, "Build the application");
const MINE = tree(2, "Write the book");

const LIST: TreeListEntry[] = [
  { tree: SAMPLE, root_status: "in_progress", frame_count: 7, current: true },
  { tree: MINE, root_status: "in_progress", frame_count: 1, current: false },
];

const OUTLINE: TreeOutline = { tree: SAMPLE, frames: [], seq: 4 };

/** The whole window on `backend`, showing OUTLINE: the tree dialogs are the app's. */
async function mount(backend: Backend): Promise<{ root: HTMLElement }> {
  const root = document.createElement("div");
  document.body.append(root);
  const withTree: Backend = { ...backend, outline: () => answer(OUTLINE) };
  await act(async () => {
    render(<App backend={withTree} />, root);
    await settle();
  });
  await act(settle);
  return { root };
}

/** The menu alone, with `run` passing commands straight through. */
async function mountMenu(backend: Backend): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  const run = async <T,>(call: Promise<Answer<T>>): Promise<ApiError | null> => {
    const result = await call;
    return result.status === "error" ? result.error : null;
  };
  await act(async () => {
    render(
      <TreeMenu
        backend={backend}
        outline={OUTLINE}
        run={run}
        onNewTree={() => undefined}
        onDeleteTree={() => undefined}
      />,
      root,
    );
    await settle();
  });
  return root;
}

function button(root: HTMLElement, testId: string): HTMLButtonElement {
  const found = root.querySelector<HTMLButtonElement>(`[data-testid=${testId}]`);
  if (found === null) throw new Error(`no ${testId}`);
  return found;
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("TreeMenu", () => {
  it("lists the trees with the current one chosen, and opens another by focusing its focus", async () => {
    const focused: string[] = [];
    const root = await mountMenu(
      fakeBackend({
        listTrees: () => answer(LIST),
        focusFrame: (id) => {
          focused.push(id);
          return answer<Frame>({ code: "internal", message: "not needed" });
        },
      }),
    );
    const select = root.querySelector<HTMLSelectElement>("[data-testid=tree-select]");
    expect([...(select?.options ?? [])].map((o) => o.textContent)).toEqual([
      "Build the application",
      "Write the book",
    ]);
    expect(select?.value).toBe(SAMPLE.id);
    await act(async () => {
      if (select === null) return;
      select.value = MINE.id;
      select.dispatchEvent(new Event("change"));
      await settle();
    });
    expect(focused).toEqual([MINE.focus]);
  });

  it("deletes the current tree only after the dialog, which says what goes", async () => {
    const deleted: string[] = [];
    const { root } = await mount(
      fakeBackend({
        listTrees: () => answer(LIST),
        deleteTree: (id) => {
          deleted.push(id);
          return answer<DeletedTree>({ tree: id, title: SAMPLE.title, frames: 7, messages: 12 });
        },
      }),
    );
    await act(async () => {
      button(root, "delete-tree-button").click();
      await settle();
    });
    const dialog = root.querySelector("[data-testid=delete-tree-dialog]");
    expect(dialog?.textContent).toContain("Delete “Build the application”?");
    expect(dialog?.textContent).toContain("7 frames");
    expect(deleted).toEqual([]);
    await act(async () => {
      dialog?.querySelector<HTMLButtonElement>("button[type=submit]")?.click();
      await settle();
    });
    expect(deleted).toEqual([SAMPLE.id]);
    expect(root.querySelector("[data-testid=delete-tree-dialog]")).toBeNull();
  });

  it("keeps the dialog open with the backend's refusal", async () => {
    const refusal: ApiError = {
      code: "invalid",
      message: "a reply is being written; stop it first",
    };
    const { root } = await mount(
      fakeBackend({
        listTrees: () => answer(LIST),
        deleteTree: () => answer<DeletedTree>(refusal),
      }),
    );
    await act(async () => {
      button(root, "delete-tree-button").click();
      await settle();
    });
    await act(async () => {
      root
        .querySelector<HTMLButtonElement>("[data-testid=delete-tree-dialog] button[type=submit]")
        ?.click();
      await settle();
    });
    expect(root.querySelector("[data-testid=delete-tree-dialog] [role=alert]")?.textContent).toBe(
      refusal.message,
    );
  });

  it("creates a tree from the New tree dialog", async () => {
    const created: (string | null)[][] = [];
    const { root } = await mount(
      fakeBackend({
        listTrees: () => answer(LIST),
        createTree: (title, criteria, workspace) => {
          created.push([title, criteria, workspace]);
          return answer<Tree>(MINE);
        },
      }),
    );
    await act(async () => {
      button(root, "new-tree-button").click();
      await settle();
    });
    const form = root.querySelector("[data-testid=new-tree-form]");
    const title = form?.querySelector<HTMLInputElement>("input[name=title]");
    const criteria = form?.querySelector<HTMLTextAreaElement>("textarea[name=criteria]");
    await act(async () => {
      if (!title || !criteria) return;
      title.value = "Write the book";
      title.dispatchEvent(new Event("input"));
      criteria.value = "Ten chapters";
      criteria.dispatchEvent(new Event("input"));
      await settle();
    });
    await act(async () => {
      form?.querySelector<HTMLButtonElement>("button[type=submit]")?.click();
      await settle();
    });
    expect(created).toEqual([["Write the book", "Ten chapters", null]]);
    expect(root.querySelector("[data-testid=new-tree-form]")).toBeNull();
  });
});
