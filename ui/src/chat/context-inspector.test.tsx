import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { ContextDoc_Serialize as ContextDoc } from "../bindings";
import { answer, fakeBackend, settle } from "../test-backend";
import { ContextInspector } from "./context-inspector";

function doc(masked: number, saved: number): ContextDoc {
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
      masked_tokens_saved: saved,
    },
  };
}

async function inspect(context: ContextDoc): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  const backend = fakeBackend({ frameContext: () => answer(context) });
  await act(async () => {
    render(<ContextInspector backend={backend} frame="f0000000002" seq={1} />, root);
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
  });

  it("says nothing of masking when nothing was masked", async () => {
    const root = await inspect(doc(0, 0));
    expect(root.querySelector("[data-testid=context-system]")).not.toBeNull();
    expect(root.querySelector("[data-testid=context-masked]")).toBeNull();
  });
});
