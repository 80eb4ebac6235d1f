import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { TreeOutline_Serialize as TreeOutline } from "../bindings";
import { outlineFrame, settle } from "../test-backend";
import { lay, useLaid, type Laid } from "./laid";
import { statusCode } from "./render";

afterEach(() => {
  document.body.replaceChildren();
});

/** A tree `t0000000001` of a root and `children` children, each of `tokens` tokens. */
function tree(children: number, tokens = 1): TreeOutline {
  const root = outlineFrame("f0000000000", null);
  const frames = [root];
  for (let i = 1; i <= children; i++) {
    frames.push(outlineFrame(`f${String(i).padStart(10, "0")}`, root.id, { position: i, tokens }));
  }
  const ids = { id: "t0000000001", root: root.id, focus: root.id };
  return { tree: { ...ids, title: "Tree", created_at: 0, workspace: null }, frames, seq: 1 };
}

/** Renders `useLaid` over `outline` (laid out at once up to 10 frames); returns each layout. */
function mount(outline: TreeOutline) {
  const seen: Laid[] = [];
  const root = document.createElement("div");
  document.body.append(root);
  function Graph({ outline }: { outline: TreeOutline }) {
    seen.push(useLaid(outline, "tokens", 10));
    return null;
  }
  return {
    seen,
    /** Shows `next`, and waits until the layout of its frames is on screen. */
    show: async (next: TreeOutline) => {
      await act(async () => {
        render(<Graph outline={next} />, root);
        await settle();
      });
      for (let turns = 0; seen.at(-1)?.frames !== next.frames && turns < 50; turns++) {
        await act(settle);
      }
    },
    initial: outline,
  };
}

describe("the view's layout of a large tree", () => {
  it("lays a small tree out at once", async () => {
    const graph = mount(tree(5));
    await graph.show(graph.initial);
    expect(graph.seen[0]?.layout.count).toBe(6);
  });

  it("draws nothing until a large tree's layout, made in slices, is done", async () => {
    const graph = mount(tree(50));
    await graph.show(graph.initial);
    expect(graph.seen[0]?.layout.count).toBe(0);
    expect(graph.seen.at(-1)?.layout.count).toBe(51);
  });

  it("keeps the tree's previous layout on screen while its next one is made", async () => {
    const graph = mount(tree(50));
    await graph.show(graph.initial);
    const before = graph.seen.at(-1);
    const next = tree(60, 2);
    const from = graph.seen.length;
    await graph.show(next);
    const during = graph.seen[from];
    expect(during).toBe(before);
    expect(graph.seen.at(-1)?.layout.count).toBe(61);
    expect(graph.seen.at(-1)?.frames).toBe(next.frames);
  });

  it("shows another tree's large outline as nothing until it is laid out", async () => {
    const graph = mount(tree(50));
    await graph.show(graph.initial);
    const other = tree(40);
    other.tree = { ...other.tree, id: "t0000000002" };
    const from = graph.seen.length;
    await graph.show(other);
    expect(graph.seen[from]?.layout.count).toBe(0);
    expect(graph.seen.at(-1)?.tree).toBe("t0000000002");
  });
});

describe("an outline laid out", () => {
  it("carries each frame's status and whether it was rolled back, by rank", () => {
    const outline = tree(2);
    outline.frames[1] = { ...outline.frames[1]!, status: "failed", rolled_back_at: 1_700_000_000 };
    const laid = lay(outline, "tokens");
    const at = (id: string) => laid.rankOf(id)!;
    expect(laid.rolledBack[at("f0000000001")]).toBe(1);
    expect(laid.rolledBack[at("f0000000002")]).toBe(0);
    expect(laid.status[at("f0000000001")]).toBe(statusCode("failed"));
    expect(laid.frames).toBe(outline.frames);
  });
});
