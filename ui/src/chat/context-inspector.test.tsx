import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  ContextDoc_Serialize as ContextDoc,
  FrameCost_Serialize as FrameCost,
} from "../bindings";
import { answer, fakeBackend, settle } from "../test-backend";
import { frameCost } from "../test-costs";
import { ContextInspector } from "./context-inspector";

function doc(masked: number, saved: number, calls = 0): ContextDoc {
  return {
    system: "preamble <stack-context/>",
    xml: "<stack-context/>",
    omission: null,
    messages: [],
    report: {
      focus: "f0000000002",
      budget: 10_000,
      total_tokens: 1_000,
      fits: true,
      sections: [
        { kind: "preamble", frame: null, label: "preamble", tokens: 1_000, state: "full" },
      ],
      omitted_messages: 0,
      linear_tokens: 4_000,
      masked_results: masked,
      masked_calls: calls,
      masked_tokens_saved: saved,
    },
  };
}

async function inspect(context: ContextDoc, cost: FrameCost | null = null): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  const backend = fakeBackend({ frameContext: () => answer(context) });
  await act(async () => {
    render(<ContextInspector backend={backend} frame="f0000000002" seq={1} cost={cost} />, root);
    await settle();
  });
  return root;
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the context inspector", () => {
  it("says how many older tool results were masked and what that saved", async () => {
    const root = await inspect(doc(3, 12_345));
    expect(root.querySelector("[data-testid=context-masked]")?.textContent).toContain(
      "3 older tool results are sent as one-line stubs",
    );
    expect(root.querySelector("[data-testid=context-masked]")?.textContent).toContain("12,345");
    expect(root.querySelector("[data-testid=context-masked]")?.textContent).not.toContain("calls");
  });

  it("says how many of the masked results' calls had long arguments cut", async () => {
    const root = await inspect(doc(3, 12_345, 2));
    expect(root.querySelector("[data-testid=context-masked]")?.textContent).toContain(
      "3 older tool results are sent as one-line stubs, and 2 of their calls with long arguments cut (the model",
    );
  });

  it("shows what the frame's model calls cost beside the context", async () => {
    const root = await inspect(doc(0, 0), frameCost(420_000, 1_200_000));
    expect(root.querySelector("[data-testid=context-cost] summary")?.textContent).toBe(
      "Spent here: $0.42; with its subtree: $1.20",
    );
  });

  it("says nothing of masking when nothing was masked", async () => {
    const root = await inspect(doc(0, 0));
    expect(root.querySelector("[data-testid=context-system]")).not.toBeNull();
    expect(root.querySelector("[data-testid=context-masked]")).toBeNull();
  });
});
