import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  FrameDetail_Serialize as FrameDetail,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { IN_PROGRESS_ACTIONS, NO_FILES, outlineFrame } from "../test-backend";
import { FrameHeader } from "./frame-header";
import { CRITERIA_PREVIEW, RESULTS_PREVIEW, preview } from "./long-text";

const ROOT = "f0000000001";
const FRAME = "f0000000002";
const OTHER = "f0000000003";

const OUTLINE: TreeOutline = {
  tree: {
    id: "t0000000001",
    title: "Build",
    root: ROOT,
    focus: FRAME,
    created_at: 0,
    workspace: null,
  },
  frames: [
    outlineFrame(ROOT, null, { title: "Build the app" }),
    outlineFrame(FRAME, ROOT, { title: "Explore", status: "completed" }),
    outlineFrame(OTHER, ROOT, { title: "Other", status: "completed", position: 1 }),
  ],
  seq: 1,
};

/** A report of `count` numbered lines, each a short sentence. */
function report(count: number): string {
  return Array.from({ length: count }, (_, i) => `Line ${i + 1} of the report.`).join("\n");
}

function detail(id: string, more: Partial<FrameDetail>): FrameDetail {
  return {
    ...outlineFrame(id, ROOT, { status: "completed" }),
    tree: "t0000000001",
    created_at: 0,
    success_criteria: "The code is understood",
    status_reason: null,
    results: null,
    results_compacted: null,
    artifacts: [],
    decisions: [],
    log_path: "/tmp/log.md",
    actions: { ...IN_PROGRESS_ACTIONS, chat: false, pop: false },
    files: NO_FILES,
    ...more,
  };
}

let root: HTMLElement | null = null;

afterEach(() => {
  if (root) render(null, root);
  root?.remove();
  root = null;
});

function show(frameDetail: FrameDetail) {
  const frame = OUTLINE.frames.find((f) => f.id === frameDetail.id)!;
  const header = (
    <FrameHeader
      outline={OUTLINE}
      frame={frame}
      detail={frameDetail}
      canPop={false}
      inspecting={false}
      showingChanges={false}
      onPop={() => undefined}
      onToggleInspector={() => undefined}
      onToggleChanges={() => undefined}
      onExport={() => undefined}
      onFocus={() => undefined}
    />
  );
  if (root === null) {
    root = document.createElement("div");
    document.body.append(root);
  }
  const at = root;
  // Preact's act runs a synchronous callback's renders before it returns.
  void act(() => render(header, at));
  return at;
}

function text(css: string): string {
  return root?.querySelector(css)?.textContent ?? "";
}

function click(css: string) {
  const button = root?.querySelector<HTMLButtonElement>(css);
  if (!button) throw new Error(`no ${css}`);
  void act(() => button.click());
}

describe("preview", () => {
  it("leaves a short text whole", () => {
    expect(preview("Done.\n\nAll of it.", RESULTS_PREVIEW)).toEqual({
      text: "Done.\n\nAll of it.",
      cut: false,
    });
  });

  it("keeps the first lines that hold something, blank lines between them not counted", () => {
    const text = "One\n\nTwo\n\nThree\n\nFour\n\nFive\n\nSix";
    const head = preview(text, RESULTS_PREVIEW);
    expect(head).toEqual({ text: "One\n\nTwo\n\nThree…", cut: true });
  });

  it("does not cut when only white space follows the last line it keeps", () => {
    const text = `${report(RESULTS_PREVIEW.lines)}\n${"\n".repeat(100_000)}`;
    expect(preview(text, RESULTS_PREVIEW)).toEqual({ text, cut: false });
  });

  it("cuts one enormous line at a word, within the character limit", () => {
    const text = "word ".repeat(200_000);
    const head = preview(text, RESULTS_PREVIEW);
    expect(head.cut).toBe(true);
    expect(head.text.endsWith("word…")).toBe(true);
    expect(head.text.length).toBeLessThanOrEqual(RESULTS_PREVIEW.chars + 1);
  });

  it("cuts a line without spaces where the limit falls", () => {
    const head = preview("x".repeat(10_000), CRITERIA_PREVIEW);
    expect(head).toEqual({ text: `${"x".repeat(CRITERIA_PREVIEW.chars)}…`, cut: true });
  });

  it("ends at the line before when the long line's words would keep less", () => {
    const text = `${"a".repeat(CRITERIA_PREVIEW.chars - 20)}\n${"b".repeat(400)}`;
    expect(preview(text, CRITERIA_PREVIEW)).toEqual({
      text: `${"a".repeat(CRITERIA_PREVIEW.chars - 20)}…`,
      cut: true,
    });
  });
});

describe("long results in the frame header", () => {
  it("shows the first lines of long results, and all of them after Show all", () => {
    show(detail(FRAME, { results: report(200) }));
    const results = text("[data-testid=frame-results]");
    expect(results).toContain("Line 1 of the report.");
    expect(results).toContain(`Line ${RESULTS_PREVIEW.lines} of the report.`);
    expect(results).not.toContain(`Line ${RESULTS_PREVIEW.lines + 1} of the report.`);
    expect(root?.querySelector("[data-testid=frame-results]")?.getAttribute("data-shown")).toBe(
      "head",
    );
    expect(text("[data-testid=results-toggle]")).toBe("Show all (200 lines)");

    click("[data-testid=results-toggle]");
    expect(text("[data-testid=frame-results]")).toContain("Line 200 of the report.");
    expect(text("[data-testid=results-toggle]")).toBe("Show less");
    expect(root?.querySelector("[data-testid=results-toggle]")?.getAttribute("aria-expanded")).toBe(
      "true",
    );

    // Show less at the end, after reading them all, goes back to the first lines.
    click("[data-testid=results-toggle-end]");
    expect(text("[data-testid=frame-results]")).not.toContain("Line 200 of the report.");
    expect(root?.querySelector("[data-testid=results-toggle-end]")).toBeNull();
  });

  it("shows the compacted results when the frame has them, marked so", () => {
    show(
      detail(FRAME, {
        results: report(200),
        results_compacted: "Read the renderer; two views duplicate it.",
      }),
    );
    expect(text("[data-testid=frame-results]")).toContain(
      "Results (compacted):Show all (200 lines)Read the renderer; two views duplicate it.",
    );
    click("[data-testid=results-toggle]");
    const all = text("[data-testid=frame-results]");
    expect(all).toContain("Line 200 of the report.");
    expect(all).not.toContain("two views duplicate it");
  });

  it("shows short results whole, with nothing to toggle", () => {
    show(detail(FRAME, { results: "The plan is **done**", results_compacted: "Done" }));
    expect(text("[data-testid=frame-results] strong")).toBe("done");
    expect(root?.querySelector("[data-testid=results-toggle]")).toBeNull();
  });

  it("cuts long criteria too, and shows them whole on request", () => {
    const criteria = `Very thorough exploration.\n${report(40)}`;
    show(detail(FRAME, { success_criteria: criteria }));
    expect(text("[data-testid=frame-criteria]")).not.toContain("Line 40 of the report.");
    click("[data-testid=criteria-toggle]");
    expect(text("[data-testid=frame-criteria]")).toContain("Line 40 of the report.");
    click("[data-testid=criteria-toggle]");
    expect(text("[data-testid=frame-criteria]")).not.toContain("Line 40 of the report.");
  });

  it("starts short again when another frame comes into focus", () => {
    show(detail(FRAME, { results: report(200) }));
    click("[data-testid=results-toggle]");
    expect(text("[data-testid=frame-results]")).toContain("Line 200 of the report.");
    show(detail(OTHER, { results: report(300) }));
    expect(text("[data-testid=frame-results]")).not.toContain("Line 300 of the report.");
    expect(text("[data-testid=results-toggle]")).toBe("Show all (300 lines)");
  });
});
