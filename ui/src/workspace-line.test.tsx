import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Answer, Backend } from "./backend";
import type { ApiError, Tree_Serialize as Tree } from "./bindings";
import { answer, fakeBackend, settle } from "./test-backend";
import { WorkspaceLine, shortPath } from "./workspace-line";

afterEach(() => {
  document.body.replaceChildren();
});

const TREE: Tree = {
  id: "t0000000001",
  title: "Build",
  root: "f0000000001",
  focus: "f0000000001",
  created_at: 0,
  workspace: "/home/ada/proj",
};

async function mount(tree: Tree, backend: Backend) {
  const root = document.createElement("div");
  document.body.append(root);
  const errors: ApiError[] = [];
  const run = async <T,>(call: Promise<Answer<T>>) => {
    const result = await call;
    return result.status === "error" ? result.error : null;
  };
  await act(async () => {
    render(
      <WorkspaceLine backend={backend} tree={tree} run={run} onError={(e) => errors.push(e)} />,
      root,
    );
    await settle();
  });
  return { root, errors };
}

async function click(root: HTMLElement, testId: string) {
  await act(async () => {
    root.querySelector<HTMLButtonElement>(`[data-testid=${testId}]`)?.click();
    await settle();
  });
}

describe("the workspace line", () => {
  it("shows the tree's folder with its full path in a tooltip", async () => {
    const { root } = await mount(TREE, fakeBackend({}));
    const path = root.querySelector("[data-testid=workspace-path]");
    expect(path?.textContent).toBe("/home/ada/proj");
    expect(path?.getAttribute("title")).toBe("/home/ada/proj");
    expect(root.querySelector("[data-testid=change-workspace]")?.textContent).toBe("Change…");
  });

  it("says when there is none, and offers to choose one", async () => {
    const { root } = await mount({ ...TREE, workspace: null }, fakeBackend({}));
    expect(root.textContent).toContain("No workspace");
    expect(root.querySelector("[data-testid=change-workspace]")?.textContent).toBe("Choose…");
    expect(root.querySelector("[data-testid=remove-workspace]")).toBeNull();
  });

  it("changes the folder to the one chosen, and changes nothing when the dialog is cancelled", async () => {
    const set: [string, string | null][] = [];
    let chosen: string | null = "/home/ada/other";
    const backend = fakeBackend({
      chooseFolder: () => answer(chosen),
      setTreeWorkspace: (tree, workspace) => {
        set.push([tree, workspace]);
        return answer({ ...TREE, workspace });
      },
    });
    const { root } = await mount(TREE, backend);
    await click(root, "change-workspace");
    chosen = null;
    await click(root, "change-workspace");
    await click(root, "remove-workspace");
    expect(set).toEqual([
      ["t0000000001", "/home/ada/other"],
      ["t0000000001", null],
    ]);
  });

  it("hands a failing folder dialog to the window", async () => {
    const failure: ApiError = { code: "internal", message: "no folder dialog on this system" };
    const { root, errors } = await mount(
      TREE,
      fakeBackend({ chooseFolder: () => answer<string | null>(failure) }),
    );
    await click(root, "change-workspace");
    expect(errors).toEqual([failure]);
  });

  it("shortens a long path to its last folders", () => {
    expect(shortPath("/home/ada/proj")).toBe("/home/ada/proj");
    const long = "/home/ada/work/clients/the-big-one/repositories/backend-service";
    const short = shortPath(long);
    expect(short.length).toBeLessThanOrEqual(40);
    expect(short).toBe("…/repositories/backend-service");
    expect(long.endsWith(short.slice(1))).toBe(true);
  });
});
