import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { FrameActions_Serialize as FrameActions, Status } from "../bindings";
import type { FrameAction } from "../frame-actions";
import { outlineFrame, settle } from "../test-backend";
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

/** The bar for a frame in `status` that the backend allows `allowed` with; what it sends. */
async function bar(status: Status, allowed: Partial<FrameActions>) {
  const sent: FrameAction[] = [];
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(
      <ReadOnlyBar
        frame={outlineFrame("f0000000002", "f0000000001", { status })}
        actions={{ ...NOTHING, ...allowed }}
        dispatch={(action) => {
          sent.push(action);
          return Promise.resolve(null);
        }}
      />,
      root,
    );
    await settle();
  });
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
});
