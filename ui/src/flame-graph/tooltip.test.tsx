import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";

import { outlineFrame } from "../test-backend";
import { frameCost, summary } from "../test-costs";
import { Tooltip } from "./tooltip";

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
});
