import { describe, expect, it } from "vitest";

import type { Backend } from "./backend";
import type { ApiError, PopRequest_Deserialize as PopRequest } from "./bindings";
import { frameActions, type FrameAction, type RunCommand } from "./frame-actions";
import { answer, fakeBackend } from "./test-backend";

const POP: PopRequest = {
  status: "completed",
  results: "done",
  results_compacted: null,
  artifacts: [],
  decisions: [],
  reason: null,
};

/** Each action, and the command call it must become. */
const CASES: [FrameAction, unknown[]][] = [
  [{ kind: "focus", id: "a" }, ["focusFrame", "a"]],
  [{ kind: "push", parent: "a", title: "T", criteria: "C" }, ["pushFrame", "a", "T", "C"]],
  [
    { kind: "plan", parent: "a", position: 2, title: "T", criteria: "C" },
    ["planFrames", "a", 2, [{ title: "T", success_criteria: "C", children: [] }]],
  ],
  [{ kind: "move", id: "b", parent: "a", position: null }, ["moveFrame", "b", "a", null]],
  [{ kind: "start", id: "a" }, ["startFrame", "a"]],
  [{ kind: "pop", id: "a", request: POP }, ["popFrame", "a", POP]],
  [{ kind: "resume", id: "a" }, ["resumeFrame", "a"]],
  [{ kind: "retry", id: "a" }, ["retryFrame", "a"]],
  [{ kind: "retry_from_start", id: "a" }, ["retryFrameFromStart", "a"]],
  [{ kind: "invalidate", id: "a", reason: null }, ["invalidateFrame", "a", null]],
  [{ kind: "edit", id: "a", title: "T", criteria: null }, ["editFrame", "a", "T", null]],
  [{ kind: "delete", id: "a" }, ["deleteFrame", "a"]],
];

describe("frameActions", () => {
  it("sends each action to its command through run, and hands back the refusal", async () => {
    const calls: unknown[][] = [];
    const refusing =
      (name: string) =>
      (...args: unknown[]) => {
        calls.push([name, ...args]);
        return answer<never>({ code: "refused", message: name });
      };
    const names = [
      "focusFrame",
      "pushFrame",
      "planFrames",
      "moveFrame",
      "startFrame",
      "popFrame",
      "resumeFrame",
      "retryFrame",
      "retryFrameFromStart",
      "invalidateFrame",
      "editFrame",
      "deleteFrame",
    ] as const;
    const backend: Backend = fakeBackend(
      Object.fromEntries(names.map((name) => [name, refusing(name)])),
    );
    let runs = 0;
    const run: RunCommand = async (call) => {
      runs += 1;
      const result = await call;
      return result.status === "error" ? result.error : null;
    };
    const dispatch = frameActions(backend, run);

    for (const [action, expected] of CASES) {
      calls.length = 0;
      const refusal: ApiError | null = await dispatch(action);
      expect(calls).toEqual([expected]);
      expect(refusal).toEqual({ code: "refused", message: expected[0] });
    }
    expect(runs).toBe(CASES.length);
  });
});
