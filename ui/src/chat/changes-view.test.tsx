import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "../backend";
import type {
  ApiError,
  FrameChanges_Serialize as FrameChanges,
  RollbackOutcome_Serialize as RollbackOutcome,
} from "../bindings";
import type { RunCommand } from "../frame-actions";
import { answer, fakeBackend, outlineFrame, settle } from "../test-backend";
import { ChangesView, confirmText, splitPatch } from "./changes-view";

const FRAME = "f0000000002";

const PATCH = [
  "diff --git a/greet.py b/greet.py",
  "index 1111111..2222222 100644",
  "--- a/greet.py",
  "+++ b/greet.py",
  "@@ -1 +1 @@",
  "-print('helo')",
  "+print('hello')",
  "diff --git a/notes.md b/notes.md",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/notes.md",
  "@@ -0,0 +1 @@",
  "+# Notes",
  "",
].join("\n");

/** A failed frame's changes to two files, whose rollback the backend offers. */
function changes(more: Partial<FrameChanges> = {}): FrameChanges {
  return {
    frame: FRAME,
    subtree: false,
    since: Date.UTC(2026, 10, 23, 10, 0),
    until: Date.UTC(2026, 10, 23, 10, 5),
    files: [
      {
        path: "greet.py",
        old_path: null,
        change: "modified",
        added_lines: 1,
        removed_lines: 1,
        binary: false,
      },
      {
        path: "notes.md",
        old_path: null,
        change: "added",
        added_lines: 1,
        removed_lines: 0,
        binary: false,
      },
    ],
    patch: PATCH,
    truncated: false,
    unavailable: null,
    roll_back: { kind: "offered" },
    rolled_back_at: null,
    ...more,
  };
}

const OUTCOME: RollbackOutcome = {
  frame: {
    ...outlineFrame(FRAME, "f0000000001", { status: "failed" }),
    tree: "t0000000001",
    created_at: 0,
    success_criteria: "it works",
    status_reason: "x",
    results: null,
    results_compacted: null,
    artifacts: [],
    decisions: [],
    rolled_back_at: Date.UTC(2026, 10, 23, 11, 0),
  },
  restored: ["greet.py"],
  deleted: ["notes.md"],
  unchanged: [],
  not_restored: [],
};

const REFUSAL: ApiError = {
  code: "refused",
  message: [
    `nothing was changed: later work changed 2 of the files ${FRAME} changed`,
    `- greet.py: changed by f0000000003 "Tidy the greeting"`,
    "- notes.md: changed outside Flame since the frame changed it",
  ].join("\n"),
};

/** The view over `backend`, with a `run` that only awaits the call, counting its runs. */
async function view(backend: Partial<Backend>) {
  const root = document.createElement("div");
  document.body.append(root);
  const runs: number[] = [];
  const run: RunCommand = async (call) => {
    runs.push(1);
    const result = await call;
    return result.status === "error" ? result.error : null;
  };
  let closed = false;
  const draw = async (seq: number) =>
    act(async () => {
      render(
        <ChangesView
          backend={fakeBackend(backend)}
          frame={FRAME}
          seq={seq}
          run={run}
          onClose={() => (closed = true)}
        />,
        root,
      );
      await settle();
    });
  await draw(1);
  await act(settle);
  return { root, runs, redraw: draw, closed: () => closed };
}

async function click(root: HTMLElement, selector: string) {
  const button = root.querySelector<HTMLElement>(selector);
  if (button === null) throw new Error(`no ${selector}`);
  await act(async () => {
    button.click();
    await settle();
  });
}

const text = (root: ParentNode, selector: string) => root.querySelector(selector)?.textContent;

afterEach(() => {
  document.body.replaceChildren();
});

describe("splitPatch", () => {
  it("cuts a diff at each file's diff --git line", () => {
    const parts = splitPatch(PATCH);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatch(/^diff --git a\/greet\.py/);
    expect(parts[1]).toMatch(/^diff --git a\/notes\.md/);
    expect(parts.join("")).toBe(PATCH);
  });

  it("keeps text before the first file, and a line that only mentions diff --git", () => {
    const patch = "note\n+ a line saying diff --git inside\ndiff --git a/x b/x\n+y\n";
    expect(splitPatch(patch)).toEqual([
      "note\n+ a line saying diff --git inside\n",
      "diff --git a/x b/x\n+y\n",
    ]);
    expect(splitPatch("")).toEqual([]);
  });
});

describe("the changes view", () => {
  it("lists the files, the span, and the diff highlighted per file", async () => {
    const asked: [string, boolean][] = [];
    const { root } = await view({
      frameChanges: (id, subtree) => {
        asked.push([id, subtree]);
        return answer(changes({ subtree }));
      },
    });
    const files = [...root.querySelectorAll<HTMLElement>("[data-testid=changed-file]")];
    expect(files.map((f) => [f.dataset["path"], f.dataset["change"]])).toEqual([
      ["greet.py", "modified"],
      ["notes.md", "added"],
    ]);
    expect(files[0]?.textContent).toContain("+1");
    expect(files[0]?.textContent).toContain("−1");
    expect(text(root, "[data-testid=changes-span]")).toContain("since it started");
    expect(text(root, "[data-testid=changes-span]")).toContain("until it ended");
    const blocks = root.querySelectorAll("[data-testid=changes-diff] pre[data-highlighted=diff]");
    expect(blocks).toHaveLength(2);
    expect(blocks[0]?.textContent).toContain("+print('hello')");
    expect(blocks[0]?.querySelector(".hljs-addition")?.textContent).toContain("+print('hello')");
    expect(root.querySelector("[data-testid=changes-truncated]")).toBeNull();

    // Ticking the box asks again with the descendants' changes.
    const box = root.querySelector<HTMLInputElement>("[data-testid=changes-subtree]");
    await act(async () => {
      box?.click();
      await settle();
    });
    await act(settle);
    expect(asked).toEqual([
      [FRAME, false],
      [FRAME, true],
    ]);
    expect(text(root, "[data-testid=changes-span]")).toContain("descendants");
  });

  it("says a running frame's diff runs to now, a rename's old path, binary files and a cut", async () => {
    const { root } = await view({
      frameChanges: () =>
        answer(
          changes({
            until: null,
            truncated: true,
            files: [
              {
                path: "src/new.rs",
                old_path: "src/old.rs",
                change: "modified",
                added_lines: 3,
                removed_lines: 2,
                binary: false,
              },
              {
                path: "logo.png",
                old_path: null,
                change: "modified",
                added_lines: 0,
                removed_lines: 0,
                binary: true,
              },
            ],
          }),
        ),
    });
    expect(text(root, "[data-testid=changes-span]")).toContain("to now");
    const [renamed, binary] = root.querySelectorAll("[data-testid=changed-file]");
    expect(renamed?.textContent).toContain("src/old.rs → src/new.rs");
    expect(binary?.textContent).toContain("binary");
    expect(binary?.textContent).not.toContain("+0");
    expect(text(root, "[data-testid=changes-truncated]")).toContain("The diff is cut here");
  });

  it("shows why there is no diff plainly, and the reason no rollback is offered", async () => {
    const { root } = await view({
      frameChanges: () =>
        answer(
          changes({
            files: [],
            patch: "",
            unavailable: "the tree has no workspace folder, so nothing was snapshotted",
            roll_back: { kind: "unavailable", reason: "a frame in progress is not rolled back" },
          }),
        ),
    });
    expect(text(root, "[data-testid=changes-unavailable]")).toBe(
      "the tree has no workspace folder, so nothing was snapshotted",
    );
    expect(root.querySelector("[data-testid=changes-diff]")).toBeNull();
    expect(text(root, "[data-testid=rollback-unavailable]")).toBe(
      "a frame in progress is not rolled back",
    );
    expect(root.querySelector("[data-testid=rollback-button]")).toBeNull();
  });

  it("rolls back an offered frame at once and says what was put back", async () => {
    let rolled = 0;
    let rolledBackAt: number | null = null;
    const { root, runs } = await view({
      frameChanges: () => answer(changes({ rolled_back_at: rolledBackAt })),
      rollbackFrame: (id) => {
        expect(id).toBe(FRAME);
        rolled += 1;
        rolledBackAt = OUTCOME.frame.rolled_back_at;
        return answer(OUTCOME);
      },
    });
    expect(text(root, "[data-testid=rollback-button]")).toBe("Roll back");
    expect(root.querySelector("[data-testid=changes-rolled-back]")).toBeNull();
    await click(root, "[data-testid=rollback-button]");
    expect(rolled).toBe(1);
    expect(runs).toHaveLength(1);
    expect(text(root, "[data-testid=rollback-restored]")).toContain("greet.py");
    expect(text(root, "[data-testid=rollback-deleted]")).toContain("notes.md");
    expect(root.querySelector("[data-testid=rollback-unchanged]")).toBeNull();
    // The changes were read again after the rollback, and say so.
    expect(text(root, "[data-testid=changes-rolled-back]")).toContain("Rolled back");
  });

  it("asks before rolling back a finished frame, and Cancel sends nothing", async () => {
    let rolled = 0;
    const { root } = await view({
      frameChanges: () => answer(changes({ roll_back: { kind: "on_request" } })),
      rollbackFrame: () => {
        rolled += 1;
        return answer(OUTCOME);
      },
    });
    expect(text(root, "[data-testid=rollback-button]")).toBe("Roll back…");
    expect(root.querySelector("[data-testid=rollback-button]")?.classList).not.toContain("primary");
    await click(root, "[data-testid=rollback-button]");
    expect(rolled).toBe(0);
    expect(text(root, "[data-testid=rollback-confirm]")).toContain(confirmText(2));
    expect(confirmText(2)).toContain("Put back the 2 files");
    expect(confirmText(2)).toContain("Flame refuses if another frame changed them since");
    await click(root, "[data-testid=rollback-confirm] button:not(.primary)");
    expect(rolled).toBe(0);
    expect(root.querySelector("[data-testid=rollback-confirm]")).toBeNull();

    await click(root, "[data-testid=rollback-button]");
    await click(root, "[data-testid=rollback-confirm-button]");
    expect(rolled).toBe(1);
    expect(root.querySelector("[data-testid=rollback-outcome]")).not.toBeNull();
  });

  it("shows a refusal's every line as the backend wrote it", async () => {
    const { root } = await view({
      frameChanges: () => answer(changes()),
      rollbackFrame: () => answer<RollbackOutcome>(REFUSAL),
    });
    await click(root, "[data-testid=rollback-button]");
    const refusal = root.querySelector("[data-testid=rollback-refusal]");
    expect(refusal?.tagName).toBe("PRE");
    expect(refusal?.getAttribute("role")).toBe("alert");
    expect(refusal?.getAttribute("data-code")).toBe("refused");
    expect(refusal?.textContent).toBe(REFUSAL.message);
    expect(root.querySelector("[data-testid=rollback-outcome]")).toBeNull();
  });

  it("reads the changes again when the tree changes, and goes back on ←", async () => {
    let reads = 0;
    const { root, redraw, closed } = await view({
      frameChanges: () => {
        reads += 1;
        return answer(changes());
      },
    });
    expect(reads).toBe(1);
    await redraw(2);
    expect(reads).toBe(2);
    await click(root, "[data-testid=changes-back]");
    expect(closed()).toBe(true);
  });

  it("shows a failed read's message", async () => {
    const { root } = await view({
      frameChanges: () => answer<FrameChanges>({ code: "not_found", message: "no frame f9" }),
    });
    expect(text(root, "[role=alert]")).toBe("no frame f9");
  });
});
