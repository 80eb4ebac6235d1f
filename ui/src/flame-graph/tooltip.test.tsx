import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  FrameCost_Serialize as FrameCost,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { answer, fakeBackend, outlineFrame, settle } from "../test-backend";
import { frameCost, summary } from "../test-costs";
import { Tooltip, useFrameCost, type CostRead } from "./tooltip";

function shown(props: Parameters<typeof Tooltip>[0]): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  render(<Tooltip {...props} />, root);
  return root;
}

afterEach(() => {
  document.body.replaceChildren();
});

const FRAME = outlineFrame("f0000000001", null, { title: "Parser", tokens: 1_200 });
const PLACE = { x: 10, y: 10, paneWidth: 1_000 };

describe("the graph's tooltip", () => {
  it("says what the frame and its subtree cost", () => {
    const root = shown({
      frame: FRAME,
      cost: frameCost(420_000, 1_200_000),
      weight: 1_200,
      mode: "tokens",
      ...PLACE,
    });
    expect(root.querySelector("[data-testid=tooltip-cost]")?.textContent).toBe(
      "$0.42; $1.20 with its subtree",
    );
  });

  it("shows tokens of a model with no known price, and says so", () => {
    const llama = { model: "llama3.1:8b", tokens: 2_048 };
    const cost = {
      own: summary(0, "unknown" as const, 2_048, llama),
      subtree: summary(0, "unknown" as const, 2_048, llama),
      models: [],
    };
    const root = shown({ frame: FRAME, cost, weight: 0, mode: "tokens", ...PLACE });
    expect(root.querySelector("[data-testid=tooltip-cost]")?.textContent).toBe(
      "price unknown: 2,048 tokens of llama3.1:8b",
    );
  });

  it("says nothing was recorded for a frame without usage, and gives the width in dollars", () => {
    const root = shown({ frame: FRAME, cost: null, weight: 1_500_000, mode: "cost", ...PLACE });
    expect(root.querySelector("[data-testid=tooltip-cost]")?.textContent).toBe("nothing recorded");
    expect(root.textContent).toContain("Width$1.50 with its subtree, at known prices");
  });

  it("shows the frame's budget and marks a spent one; none without a budget", () => {
    const budget = {
      frame: FRAME.id,
      budget: { micro_usd: null, tokens: 10_000, tool_calls: 20 },
      spent: { micro_usd: 0, priced: "none" as const, tokens: 12_500, tool_calls: 4 },
      allowance: { bounds: [] },
    };
    const root = shown({ frame: FRAME, cost: null, budget, weight: 0, mode: "tokens", ...PLACE });
    expect(root.querySelector("[data-testid=tooltip-budget]")?.textContent).toBe(
      "12,500 / 10,000 tokens · 4 / 20 tool calls (spent)",
    );
    const plain = shown({ frame: FRAME, cost: null, weight: 0, mode: "tokens", ...PLACE });
    expect(plain.querySelector("[data-testid=tooltip-budget]")).toBeNull();
  });
});

describe("the cost the tooltip reads", () => {
  const ROOT = outlineFrame("f0000000001", null);
  const CHILD = outlineFrame("f0000000002", ROOT.id);
  const OUTLINE: TreeOutline = {
    tree: {
      id: "t0000000001",
      title: "Build",
      root: ROOT.id,
      focus: ROOT.id,
      created_at: 0,
      workspace: null,
    },
    frames: [ROOT, CHILD],
    seq: 1,
    focus_cost: frameCost(1_000_000, 3_000_000),
  };

  /** Renders a component that reads `id`'s cost through `frameCost`; returns what it read. */
  async function readCost(id: string | null, frameCost: (id: string) => FrameCost | Error) {
    const asked: string[] = [];
    const seen: CostRead[] = [];
    const backend = fakeBackend({
      frameCost: (frame) => {
        asked.push(frame);
        const read = frameCost(frame);
        return read instanceof Error
          ? answer<FrameCost>({ code: "not_found", message: read.message })
          : answer(read);
      },
    });
    function Reader() {
      seen.push(useFrameCost(backend, OUTLINE, id));
      return null;
    }
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(<Reader />, root);
      await settle();
    });
    return { asked, seen };
  }

  it("takes the focused frame's from the outline, asking the backend nothing", async () => {
    const { asked, seen } = await readCost(ROOT.id, () => new Error("not asked"));
    expect(asked).toEqual([]);
    expect(seen.at(-1)).toEqual(frameCost(1_000_000, 3_000_000));
  });

  it("reads another frame's from the backend, saying so until it answers", async () => {
    const { asked, seen } = await readCost(CHILD.id, () => frameCost(2_000_000));
    expect(asked).toEqual([CHILD.id]);
    expect(seen[0]).toBe("reading");
    expect(seen.at(-1)).toEqual(frameCost(2_000_000));
  });

  it("takes a frame whose subtree recorded nothing as no cost, and a failed read as such", async () => {
    expect((await readCost(CHILD.id, () => frameCost(0))).seen.at(-1)).toBeNull();
    expect((await readCost(CHILD.id, () => new Error("gone"))).seen.at(-1)).toBe("failed");
    expect((await readCost(null, () => frameCost(5))).seen.at(-1)).toBeNull();
  });

  it("words the reading and the failure in the tooltip", () => {
    for (const [cost, text] of [
      ["reading", "…"],
      ["failed", "could not be read"],
    ] as const) {
      const root = shown({ frame: FRAME, cost, weight: 0, mode: "tokens", ...PLACE });
      expect(root.querySelector("[data-testid=tooltip-cost]")?.textContent).toBe(text);
    }
  });
});
