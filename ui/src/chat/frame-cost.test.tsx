import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "../backend";
import type {
  FrameCost_Serialize as FrameCost,
  GatewaySavings,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { answer, countingBackend, fakeBackend, outlineFrame, settle } from "../test-backend";
import { NO_TOKENS, frameCost, summary } from "../test-costs";
import { CostBreakdown, GatewayCostLine, useGatewaySavings } from "./frame-cost";
import { mountHeader } from "./test-header";

function mount(node: preact.ComponentChild): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  render(node, root);
  return root;
}

afterEach(() => {
  document.body.replaceChildren();
});

const ROOT = outlineFrame("f0000000001", null, { title: "Build" });
const CHILD = outlineFrame("f0000000002", "f0000000001", { title: "Parser" });

/** The header of `frame`, in an outline focused on `focus` that carries `cost` as the focus's. */
function header(cost: FrameCost | undefined, frame = CHILD, focus = frame): HTMLElement {
  const outline: TreeOutline = {
    tree: {
      id: "t0000000001",
      title: "Build",
      root: ROOT.id,
      focus: focus.id,
      created_at: 0,
      workspace: null,
    },
    frames: [ROOT, CHILD],
    seq: 1,
    ...(cost === undefined ? {} : { focus_cost: cost }),
  };
  return mountHeader(outline, frame);
}

describe("the frame header's cost", () => {
  it("gives the frame's own cost and its subtree's", () => {
    const root = header(frameCost(1_000_000, 3_500_000), ROOT);
    const line = root.querySelector("[data-testid=frame-cost]");
    expect(line?.textContent).toBe("Cost: $1.00; $3.50 with its subtree");
    expect(line?.getAttribute("data-completeness")).toBe("complete");
  });

  it("says when part of it is at an unknown price", () => {
    const llama = { model: "llama3.1:8b", tokens: 900 };
    const partial = summary(250_000, "partial", 1_900, llama);
    const root = header({ own: partial, subtree: partial, models: [] });
    expect(root.querySelector("[data-testid=frame-cost]")?.textContent).toBe(
      "Cost: $0.25 + 900 tokens of llama3.1:8b at an unknown price",
    );
  });

  it("is not shown when nothing was recorded", () => {
    expect(header(undefined).querySelector("[data-testid=frame-cost]")).toBeNull();
    // The outline's cost is its focus's, never another frame's.
    expect(header(frameCost(5), CHILD, ROOT).querySelector("[data-testid=frame-cost]")).toBeNull();
  });
});

/** What the gateway's calls in a frame came to, as the backend sends it. */
function savings(billed: number, client: number): GatewaySavings {
  return {
    calls: 2,
    refused: 0,
    context_calls: 2,
    billed: summary(billed, "complete"),
    client: summary(client, "complete"),
    rewrites: [],
  };
}

/** The header's gateway line for `frame` as the chat pane makes it, over `backend`. */
function GatewayProbe(props: { backend: Backend; frame: string; cost: FrameCost | null }) {
  return <GatewayCostLine savings={useGatewaySavings(props.backend, props.frame, props.cost)} />;
}

describe("the frame header's gateway line", () => {
  it("reads a frame's gateway calls once, and again only when its own cost changes", async () => {
    const { backend, calls } = countingBackend(
      fakeBackend({
        gatewayFrame: (id) => answer(id === ROOT.id ? savings(1_200_000, 4_500_000) : null),
      }),
    );
    const root = document.createElement("div");
    document.body.append(root);
    const show = async (frame: string, cost: FrameCost | null) =>
      act(async () => {
        render(<GatewayProbe backend={backend} frame={frame} cost={cost} />, root);
        await settle();
      });
    const reads = () => calls.filter((c) => c === "gatewayFrame").length;

    await show(ROOT.id, frameCost(12_000));
    expect(root.querySelector("[data-testid=frame-gateway-cost]")?.textContent).toBe(
      "billed $1.20 through the gateway (the agent's own requests: $4.50)",
    );
    expect(reads()).toBe(1);
    // Drawn again with the same cost (another change in the tree): not read again.
    await show(ROOT.id, frameCost(12_000));
    expect(reads()).toBe(1);
    // A new call recorded its usage in the frame: read again.
    await show(ROOT.id, frameCost(20_000));
    expect(reads()).toBe(2);
    // A frame the gateway made no call in shows nothing, and one with no usage is not asked.
    await show(CHILD.id, frameCost(5_000));
    expect(reads()).toBe(3);
    expect(root.querySelector("[data-testid=frame-gateway-cost]")).toBeNull();
    await show(ROOT.id, null);
    expect(reads()).toBe(3);
    expect(root.querySelector("[data-testid=frame-gateway-cost]")).toBeNull();
  });
});

describe("the context inspector's cost breakdown", () => {
  it("lists the frame's usage by model, unknown prices as such", () => {
    const cost: FrameCost = {
      ...frameCost(3_000_000, 3_000_000),
      models: [
        {
          model: "claude-sonnet-4-5",
          usage: {
            ...NO_TOKENS,
            input_tokens: 1_000_000,
            cache_read_tokens: 20_000,
            cache_write_tokens: 300,
            cache_write_long_tokens: 4_000,
          },
          micro_usd: 3_006_000,
          as_of: "2026-11",
        },
        {
          model: "llama3.1:8b",
          usage: { ...NO_TOKENS, input_tokens: 512, output_tokens: 64 },
          micro_usd: null,
          as_of: null,
        },
      ],
    };
    const root = mount(<CostBreakdown cost={cost} />);
    const heads = root.querySelectorAll("[data-testid=context-cost-models] th");
    expect(Array.from(heads, (h) => h.textContent)[4]).toBe("Cache write (1\u00a0h)");
    const rows = Array.from(root.querySelectorAll("[data-testid=context-cost-models] tbody tr"));
    expect(rows.map((r) => Array.from(r.children, (c) => c.textContent))).toEqual([
      ["claude-sonnet-4-5", "1,000,000", "20,000", "300", "4,000", "0", "$3.01", "2026-11"],
      ["llama3.1:8b", "512", "0", "0", "0", "64", "price unknown", ""],
    ]);
    expect(root.querySelector("summary")?.textContent).toBe(
      "Spent here: $3.00; with its subtree: $3.00",
    );
    expect(mount(<CostBreakdown cost={null} />).textContent).toContain("No model call recorded");
  });
});
