// Every action on a frame the window sends — from the graph and its menu, the frame dialogs, the
// chat's composer and pop dialog, the breadcrumbs and the read-only bar — goes out through
// `frameActions` here, so one place says which backend command each action is. The backend
// decides whether it is allowed; the caller shows the refusal.

import type { Answer, Backend } from "./backend";
import type { ApiError, PopRequest_Deserialize as PopRequest } from "./bindings";

/** Runs a frame operation and reloads the tree; resolves to the refusal, if any. */
export type RunCommand = <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>;

/** One action on a frame, with what the backend needs to carry it out. */
export type FrameAction =
  | { kind: "focus"; id: string }
  | { kind: "push"; parent: string; title: string; criteria: string }
  /** A planned child with no children of its own; `position` null puts it last. */
  | { kind: "plan"; parent: string; position: number | null; title: string; criteria: string }
  | { kind: "move"; id: string; parent: string; position: number | null }
  | { kind: "start"; id: string }
  | { kind: "pop"; id: string; request: PopRequest }
  | { kind: "resume"; id: string }
  | { kind: "retry"; id: string }
  /** Rolls a failed frame's changes back, then retries it from the files as they were. */
  | { kind: "retry_from_start"; id: string }
  | { kind: "invalidate"; id: string; reason: string | null }
  | { kind: "edit"; id: string; title: string; criteria: string | null }
  | { kind: "delete"; id: string };

/** Sends one frame action; resolves to the backend's refusal, if any. */
export type DispatchFrameAction = (action: FrameAction) => Promise<ApiError | null>;

/**
 * The dispatcher of frame actions over `backend`. Each call goes through `run`, which reloads
 * the tree and decides where a refusal is shown (the window's notice, or the caller's place).
 */
export function frameActions(backend: Backend, run: RunCommand): DispatchFrameAction {
  return (action) => {
    switch (action.kind) {
      case "focus":
        return run(backend.focusFrame(action.id));
      case "push":
        return run(backend.pushFrame(action.parent, action.title, action.criteria));
      case "plan":
        return run(
          backend.planFrames(action.parent, action.position, [
            { title: action.title, success_criteria: action.criteria, children: [] },
          ]),
        );
      case "move":
        return run(backend.moveFrame(action.id, action.parent, action.position));
      case "start":
        return run(backend.startFrame(action.id));
      case "pop":
        return run(backend.popFrame(action.id, action.request));
      case "resume":
        return run(backend.resumeFrame(action.id));
      case "retry":
        return run(backend.retryFrame(action.id));
      case "retry_from_start":
        return run(backend.retryFrameFromStart(action.id));
      case "invalidate":
        return run(backend.invalidateFrame(action.id, action.reason));
      case "edit":
        return run(backend.editFrame(action.id, action.title, action.criteria));
      case "delete":
        return run(backend.deleteFrame(action.id));
    }
  };
}
