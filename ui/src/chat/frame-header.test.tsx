import { afterEach, describe, expect, it } from "vitest";

import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { outlineFrame } from "../test-backend";
import { BREADCRUMB_STEPS, breadcrumbSteps } from "./frame-header";
import { mountHeader } from "./test-header";

afterEach(() => {
  document.body.replaceChildren();
});

/** A chain of `depth` frames below a root, each the only child of the one before. */
function chain(depth: number): FrameOutline[] {
  const id = (n: number) => `f${String(n).padStart(10, "0")}`;
  return Array.from({ length: depth + 1 }, (_, n) =>
    outlineFrame(id(n), n === 0 ? null : id(n - 1), { title: `Step ${n}` }),
  );
}

/** The header of `frames[at]`, with `focused` to see which frame a click asked for. */
function header(frames: FrameOutline[], at: number, focused: string[] = []): HTMLElement {
  const outline: TreeOutline = {
    tree: {
      id: "t0000000001",
      title: "Deep",
      root: frames[0]!.id,
      focus: frames[at]!.id,
      created_at: 0,
      workspace: null,
    },
    frames,
    seq: 1,
  };
  return mountHeader(outline, frames[at]!, (id) => focused.push(id));
}

const crumbs = (root: HTMLElement) =>
  root.querySelector("[data-testid=chat-breadcrumb]")?.textContent ?? "";

describe("the breadcrumb", () => {
  it("shows a short path whole", () => {
    const path = [1, 2, 3, 4, 5, 6];
    expect(breadcrumbSteps(path, false)).toEqual({ steps: path, folded: 0 });
    expect(crumbs(header(chain(BREADCRUMB_STEPS - 1), BREADCRUMB_STEPS - 1))).toBe(
      "Step 0 › Step 1 › Step 2 › Step 3 › Step 4 › Step 5",
    );
  });

  it("folds a deep path's middle: the root, how many are folded, then the last steps", () => {
    const path = Array.from({ length: 31 }, (_, n) => n);
    expect(breadcrumbSteps(path, false)).toEqual({ steps: [0, 26, 27, 28, 29, 30], folded: 25 });
    expect(breadcrumbSteps(path, true)).toEqual({ steps: path, folded: 0 });

    const focused: string[] = [];
    const root = header(chain(30), 30, focused);
    expect(crumbs(root)).toBe("Step 0 › 25 more › Step 26 › Step 27 › Step 28 › Step 29 › Step 30");
    // Every step shown still focuses its frame.
    const buttons = [...root.querySelectorAll<HTMLButtonElement>("nav button")];
    buttons.find((b) => b.textContent === "Step 27")?.click();
    expect(focused).toEqual(["f0000000027"]);
  });

  it("opens the whole path on request", async () => {
    const root = header(chain(30), 30);
    root.querySelector<HTMLButtonElement>("[data-testid=breadcrumb-more]")?.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(root.querySelector("[data-testid=breadcrumb-more]")).toBeNull();
    const text = crumbs(root);
    for (let n = 0; n <= 30; n++) expect(text).toContain(`Step ${n}`);
  });
});
