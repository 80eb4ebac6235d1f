import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "../backend";
import type {
  ContextDoc_Serialize as ContextDoc,
  FrameCost_Serialize as FrameCost,
  OpeningReport_Serialize as OpeningReport,
} from "../bindings";
import { answer, countingBackend, fakeBackend, settle } from "../test-backend";
import { frameCost } from "../test-costs";
import { formatTime } from "./changes-view";
import { ContextInspector } from "./context-inspector";

/** What the next call does with the frame's opening when it was made on entry and is kept. */
const KEPT_OPENING: OpeningReport = {
  generation: 1,
  reason: "entered",
  reason_text: "made when the conversation entered the frame",
  made_at: Date.UTC(2026, 4, 3, 14, 2),
  made_now: false,
  tokens: 1_234,
  noted_frames: 0,
  newly_masked: 0,
  cache_read_tokens: 5_600,
  cache_written_tokens: 320,
  instructions: null,
};

function doc(
  masked: number,
  saved: number,
  calls = 0,
  opening: OpeningReport = KEPT_OPENING,
  xml = "<stack-context/>",
): ContextDoc {
  return {
    system: "preamble",
    xml,
    omission: null,
    messages: [],
    previous_end: null,
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
      opening,
      cache_hit_per_mille: 873,
    },
  };
}

async function mount(backend: Backend, cost: FrameCost | null = null): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<ContextInspector backend={backend} frame="f0000000002" seq={1} cost={cost} />, root);
    await settle();
  });
  return root;
}

function inspect(context: ContextDoc, cost: FrameCost | null = null): Promise<HTMLElement> {
  return mount(fakeBackend({ frameContext: () => answer(context) }), cost);
}

function text(root: HTMLElement, testId: string): string {
  return root.querySelector(`[data-testid=${testId}]`)?.textContent ?? "";
}

function rebuildButton(root: HTMLElement): HTMLButtonElement {
  const button = root.querySelector("[data-testid=rebuild-opening]");
  if (!(button instanceof HTMLButtonElement)) throw new Error("no Make the opening again button");
  return button;
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

  it("shows the opening, what the next call does to the cache, and the frame's hit rate", async () => {
    const root = await inspect(doc(0, 0));
    expect(text(root, "context-opening")).toBe(
      `Opening 1 (1,234 tokens): made when the conversation entered the frame, ${formatTime(KEPT_OPENING.made_at)}.`,
    );
    expect(text(root, "context-next-call")).toBe(
      "The next call reads about 5.6k tokens from the provider's cache and writes about 320.",
    );
    expect(text(root, "context-hit-rate")).toBe(
      "This frame's replies so far read 87.3% of their input from the provider's cache.",
    );
    // The opening is the conversation's first message, shown apart from the system text.
    expect(text(root, "context-system")).toBe("preamble");
    expect(text(root, "context-opening-text")).toBe("<stack-context/>");
    expect(rebuildButton(root).disabled).toBe(false);
  });

  it("says what the next call appends and masks, and when no reply recorded usage", async () => {
    const changing = { ...KEPT_OPENING, noted_frames: 2, newly_masked: 1 };
    const context = doc(0, 0, 0, changing);
    const root = await inspect({
      ...context,
      report: { ...context.report, cache_hit_per_mille: null },
    });
    expect(text(root, "context-next-call")).toBe(
      "The next call reads about 5.6k tokens from the provider's cache and writes about 320; appends a note on 2 frames that changed; masks 1 older tool result.",
    );
    expect(text(root, "context-hit-rate")).toBe(
      "No reply in this frame has recorded its usage yet.",
    );
  });

  it("makes the opening again when asked, and shows the one the next call makes", async () => {
    const asked = {
      ...KEPT_OPENING,
      generation: 2,
      reason: "asked",
      reason_text: "made again because the person asked",
      made_now: true,
    } as const;
    let rebuilt = false;
    const { backend, calls } = countingBackend(
      fakeBackend({
        frameContext: () =>
          answer(rebuilt ? doc(0, 0, 0, asked, "<stack-context fresh/>") : doc(0, 0)),
        rebuildContext: (frame) => {
          rebuilt = frame === "f0000000002";
          return answer(null);
        },
      }),
    );
    const root = await mount(backend);
    expect(text(root, "rebuild-status")).toBe("");
    await act(async () => {
      rebuildButton(root).click();
      await settle();
    });
    // The MCP servers' line reads its own list; the context is read twice.
    expect(calls.filter((c) => c !== "mcpServers")).toEqual([
      "frameContext",
      "rebuildContext",
      "frameContext",
    ]);
    expect(text(root, "context-opening")).toBe(
      "The next call makes opening 2 (1,234 tokens): made again because the person asked.",
    );
    expect(text(root, "context-opening-text")).toBe("<stack-context fresh/>");
    expect(text(root, "rebuild-status")).toBe(
      "Asked: the next call makes the opening again, as shown below.",
    );
    // The next call makes it already: there is nothing more to ask.
    expect(rebuildButton(root).disabled).toBe(true);
  });

  it("names the project instructions the opening read, when, and what was sent of each", async () => {
    const opening: OpeningReport = {
      ...KEPT_OPENING,
      instructions: [
        {
          path: "/home/me/.config/flame/AGENTS.md",
          scope: "personal",
          size: 40,
          sent: 40,
          problem: null,
        },
        { path: "AGENTS.md", scope: "workspace", size: 1_200, sent: 1_200, problem: null },
        { path: "src/AGENTS.md", scope: "workspace", size: 50_000, sent: 31_568, problem: null },
        {
          path: "lib/AGENTS.md",
          scope: "workspace",
          size: 0,
          sent: 0,
          problem: "it is a link that leads outside the workspace",
        },
      ],
    };
    const root = await inspect(doc(0, 0, 0, opening));
    expect(text(root, "context-instructions")).toContain(
      `Project instructions (read for opening 1, ${formatTime(KEPT_OPENING.made_at)}):`,
    );
    const files = [...root.querySelectorAll("[data-testid=instruction-file]")].map(
      (li) => li.textContent,
    );
    expect(files).toEqual([
      "/home/me/.config/flame/AGENTS.md (yours, every workspace) 40 bytes",
      "AGENTS.md 1,200 bytes",
      "src/AGENTS.md cut at the limit: 31,568 of 50,000 bytes sent",
      "lib/AGENTS.md not read: it is a link that leads outside the workspace",
    ]);
  });

  it("says when no instructions were found, when they will be read, and when they are off", async () => {
    const found = await inspect(
      doc(0, 0, 0, { ...KEPT_OPENING, made_now: true, instructions: [] }),
    );
    expect(text(found, "context-instructions")).toBe(
      "Project instructions: no AGENTS.md or CLAUDE.md was found for this opening (read now for the opening the next call makes).",
    );
    document.body.replaceChildren();
    const off = await inspect(doc(0, 0));
    expect(text(off, "context-instructions")).toBe(
      "This opening was made without reading project instructions: they are turned off in Settings (or the opening is older than them).",
    );
  });

  it("shows a refused request to make the opening again, keeping the opening shown", async () => {
    const root = await mount(
      fakeBackend({
        frameContext: () => answer(doc(0, 0)),
        rebuildContext: () => answer<null>({ code: "not_found", message: "no frame f0000000002" }),
      }),
    );
    await act(async () => {
      rebuildButton(root).click();
      await settle();
    });
    expect(text(root, "rebuild-error")).toBe("no frame f0000000002");
    expect(text(root, "rebuild-status")).toBe("");
    expect(text(root, "context-opening-text")).toBe("<stack-context/>");
  });
});
