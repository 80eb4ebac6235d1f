import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  BudgetView_Serialize as BudgetView,
  FrameBudget_Serialize as FrameBudget,
} from "../bindings";
import { budgetFromFields, limitOf } from "../budget-text";
import { answer, fakeBackend, settle } from "../test-backend";
import { FrameBudgetLine } from "./frame-budget";

const FRAME = "f0000000002";

/** A view of the frame's own budget of $2.00 and 50 tool calls, with `usd` and `calls` spent. */
function view(usd: number, calls: number): BudgetView {
  return {
    frame: FRAME,
    budget: { micro_usd: 2_000_000, tokens: null, tool_calls: 50 },
    spent: { micro_usd: usd, priced: "complete", tokens: 9_000, tool_calls: calls },
    allowance: { bounds: [] },
  };
}

afterEach(() => {
  document.body.replaceChildren();
});

function mount(node: preact.ComponentChild): HTMLElement {
  const root = document.createElement("div");
  document.body.append(root);
  render(node, root);
  return root;
}

function input(root: HTMLElement, name: string, value: string) {
  const field = root.querySelector<HTMLInputElement>(`input[name=${name}]`)!;
  void act(() => {
    field.value = value;
    field.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

describe("FrameBudgetLine", () => {
  it("shows spent / budget, and marks a spent budget", () => {
    const backend = fakeBackend({});
    const root = mount(<FrameBudgetLine backend={backend} frame={FRAME} view={view(420_000, 5)} />);
    const line = root.querySelector<HTMLElement>("[data-testid=frame-budget]")!;
    expect(line.textContent).toContain("$0.42 / $2.00 · 5 / 50 tool calls");
    expect(line.dataset.exceeded).toBe("false");
    render(<FrameBudgetLine backend={backend} frame={FRAME} view={view(10, 50)} />, root);
    expect(line.dataset.exceeded).toBe("true");
    expect(line.textContent).toContain("spent; raise it or pop the frame");
    render(<FrameBudgetLine backend={backend} frame={FRAME} view={null} />, root);
    expect(line.textContent).toContain("none of its own");
  });

  it("sets a budget in micro-dollars and shows the backend's refusal as it is", async () => {
    const asked: (FrameBudget | null)[] = [];
    let refuse = true;
    const backend = fakeBackend({
      setFrameBudget: (id, budget) => {
        asked.push(
          budget === null ? null : { micro_usd: null, tokens: null, tool_calls: null, ...budget },
        );
        if (refuse) {
          return answer<BudgetView>({
            code: "refused",
            message: "a budget of $5.00 is more than the parent has left",
          });
        }
        expect(id).toBe(FRAME);
        return answer(view(0, 0));
      },
    });
    const root = mount(<FrameBudgetLine backend={backend} frame={FRAME} view={null} />);
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=budget-edit]")!.click();
      await settle();
    });
    input(root, "usd", "5");
    input(root, "calls", "40");
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=budget-save]")!.click();
      await settle();
    });
    expect(asked).toEqual([{ micro_usd: 5_000_000, tokens: null, tool_calls: 40 }]);
    expect(root.querySelector("[data-testid=budget-error]")?.textContent).toContain(
      "more than the parent has left",
    );
    refuse = false;
    input(root, "usd", "1.25");
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=budget-save]")!.click();
      await settle();
    });
    expect(asked[1]).toEqual({ micro_usd: 1_250_000, tokens: null, tool_calls: 40 });
    expect(root.querySelector("[data-testid=budget-save]")).toBeNull();
  });
});

describe("the palette's Budget…", () => {
  it("opens the form with the budget as it is, but not for a request made before", async () => {
    const backend = fakeBackend({});
    const root = mount(
      <FrameBudgetLine asked={1} backend={backend} frame={FRAME} view={view(0, 0)} />,
    );
    expect(root.querySelector("form")).toBeNull();
    await act(async () => {
      render(<FrameBudgetLine asked={2} backend={backend} frame={FRAME} view={view(0, 0)} />, root);
      await settle();
    });
    const value = (name: string) =>
      root.querySelector<HTMLInputElement>(`input[name=${name}]`)?.value;
    expect([value("usd"), value("tokens"), value("calls")]).toEqual(["2", "", "50"]);
  });
});

describe("budget fields", () => {
  it("read empty as no limit and whole numbers as limits", () => {
    expect(limitOf("")).toBeNull();
    expect(limitOf(" 12 ")).toBe(12);
    expect(limitOf("1.5")).toBeNull();
    expect(budgetFromFields("", "", "")).toBeNull();
    expect(budgetFromFields("0.5", "", "3")).toEqual({
      micro_usd: 500_000,
      tokens: null,
      tool_calls: 3,
    });
  });
});
