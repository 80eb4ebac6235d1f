import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "../backend";
import type {
  ApiError,
  FrameActions_Serialize as FrameActions,
  FrameChanges_Serialize as FrameChanges,
  RollbackOffer,
  Status,
} from "../bindings";
import type { FrameAction } from "../frame-actions";
import { answer, fakeBackend, outlineFrame, settle } from "../test-backend";
import { ReadOnlyBar } from "./read-only-bar";

const NOTHING: FrameActions = {
  push: false,
  plan: false,
  pop: false,
  start: false,
  resume: false,
  retry: false,
  invalidate: false,
  edit: false,
  move: false,
  delete: false,
  chat: false,
  start_target: null,
};

/** The changes of a failed frame whose rollback the backend answers with `offer`. */
function changesOffering(offer: RollbackOffer): FrameChanges {
  return {
    frame: "f0000000002",
    subtree: false,
    since: 1,
    until: 2,
    files: [],
    patch: "",
    truncated: false,
    unavailable: null,
    roll_back: offer,
    rolled_back_at: null,
  };
}

/**
 * The bar for a frame in `status` that the backend allows `allowed` with, over `backend`, whose
 * dispatch answers `refusal`; what it sends.
 */
async function bar(
  status: Status,
  allowed: Partial<FrameActions>,
  backend: Partial<Backend> = {},
  refusal: ApiError | null = null,
) {
  const sent: FrameAction[] = [];
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(
      <ReadOnlyBar
        backend={fakeBackend(backend)}
        frame={outlineFrame("f0000000002", "f0000000001", { status })}
        seq={1}
        actions={{ ...NOTHING, ...allowed }}
        dispatch={(action) => {
          sent.push(action);
          return Promise.resolve(refusal);
        }}
      />,
      root,
    );
    await settle();
  });
  await act(settle);
  return {
    root,
    sent,
    button: root.querySelector<HTMLButtonElement>("[data-testid=frame-action]"),
  };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the read-only bar", () => {
  it("offers the action the backend allows, and sends it", async () => {
    for (const [status, allowed, label, kind] of [
      ["planned", { start: true }, "Start", "start"],
      ["blocked", { resume: true }, "Resume", "resume"],
      ["failed", { retry: true }, "Retry as a new frame", "retry"],
    ] as const) {
      const { button, sent } = await bar(status, allowed);
      expect(button?.textContent).toBe(label);
      await act(async () => {
        button?.click();
        await settle();
      });
      expect(sent).toEqual([{ kind, id: "f0000000002" }]);
      document.body.replaceChildren();
    }
  });

  it("offers nothing the backend does not allow, whatever the status", async () => {
    // A blocked frame under a parent that is not in progress cannot be resumed.
    const blocked = await bar("blocked", {});
    expect(blocked.button).toBeNull();
    expect(blocked.root.textContent).toContain("blocked");
    const completed = await bar("completed", {});
    expect(completed.button).toBeNull();
  });

  it("offers to retry from where it started when the backend offers the rollback", async () => {
    const asked: string[] = [];
    const { root, sent } = await bar(
      "failed",
      { retry: true },
      {
        frameChanges: (id) => {
          asked.push(id);
          return answer(changesOffering({ kind: "offered" }));
        },
      },
    );
    expect(asked).toEqual(["f0000000002"]);
    const fromStart = root.querySelector<HTMLButtonElement>("[data-testid=retry-from-start]");
    expect(fromStart?.textContent).toBe("Retry from where it started");
    await act(async () => {
      fromStart?.click();
      await settle();
    });
    expect(sent).toEqual([{ kind: "retry_from_start", id: "f0000000002" }]);
  });

  it("shows a refused retry from the start with every line of the backend's message", async () => {
    const refusal: ApiError = {
      code: "refused",
      message: 'nothing was changed\n- a.txt: changed by f0000000003 "Later"',
    };
    const { root } = await bar(
      "failed",
      { retry: true },
      { frameChanges: () => answer(changesOffering({ kind: "offered" })) },
      refusal,
    );
    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=retry-from-start]")?.click();
      await settle();
    });
    const alert = root.querySelector("[role=alert]");
    expect(alert?.tagName).toBe("PRE");
    expect(alert?.textContent).toBe(refusal.message);
  });

  it("does not offer it when the rollback is not offered, or the frame cannot be retried", async () => {
    for (const offer of [
      { kind: "on_request" },
      { kind: "unavailable", reason: "no workspace" },
    ] as const) {
      const { root } = await bar(
        "failed",
        { retry: true },
        { frameChanges: () => answer(changesOffering(offer)) },
      );
      expect(root.querySelector("[data-testid=frame-action]")).not.toBeNull();
      expect(root.querySelector("[data-testid=retry-from-start]")).toBeNull();
      document.body.replaceChildren();
    }
    // A frame that cannot be retried does not even ask about its changes.
    let asked = 0;
    const { root } = await bar(
      "completed",
      {},
      {
        frameChanges: () => {
          asked += 1;
          return answer(changesOffering({ kind: "offered" }));
        },
      },
    );
    expect(asked).toBe(0);
    expect(root.querySelector("[data-testid=retry-from-start]")).toBeNull();
  });
});
