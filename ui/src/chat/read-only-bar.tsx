// In place of the composer for a frame the person cannot chat in: what it is, and the action that
// reopens it (Start a planned frame, Resume a blocked one, Retry a failed one as a new frame),
// offered only when the backend's allowed actions say it would be accepted. A failed frame whose
// changes the backend offers to roll back may also be retried from where it started: its files are
// put back first, and the new frame starts from them.

import { useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { ApiError, FrameActions, FrameOutline_Serialize as FrameOutline } from "../bindings";
import { ErrorLine } from "../error-line";
import type { DispatchFrameAction, FrameAction } from "../frame-actions";
import { STATUS_STYLE } from "../status-style";
import { useFrameChanges } from "./changes-view";

export function ReadOnlyBar({
  backend,
  frame,
  seq,
  actions,
  dispatch,
}: {
  backend: Backend;
  frame: FrameOutline;
  /** The tree's newest change, so the rollback offer is read again when it moves. */
  seq: number;
  /** What the backend allows with the frame now. */
  actions: FrameActions;
  dispatch: DispatchFrameAction;
}) {
  const [error, setError] = useState<ApiError | null>(null);
  const reopen: { label: string; action: FrameAction } | null = actions.start
    ? { label: "Start", action: { kind: "start", id: frame.id } }
    : actions.resume
      ? { label: "Resume", action: { kind: "resume", id: frame.id } }
      : actions.retry
        ? { label: "Retry as a new frame", action: { kind: "retry", id: frame.id } }
        : null;
  // Only a frame that may be retried asks whether its changes can be rolled back.
  const changes = useFrameChanges(backend, frame.id, false, seq, 0, actions.retry);
  const fromStart =
    actions.retry && changes.state === "ready" && changes.changes.roll_back.kind === "offered";
  return (
    <div class="read-only-bar" data-testid="read-only">
      <span class="muted">
        This frame is {STATUS_STYLE[frame.status].label.toLowerCase()}; its conversation is
        read-only.
      </span>
      {reopen !== null && (
        <button
          type="button"
          class="primary"
          data-testid="frame-action"
          onClick={() => void dispatch(reopen.action).then(setError)}
        >
          {reopen.label}
        </button>
      )}
      {fromStart && (
        <button
          type="button"
          data-testid="retry-from-start"
          title="Put its files back as they were when it started, then retry it as a new frame"
          onClick={() => void dispatch({ kind: "retry_from_start", id: frame.id }).then(setError)}
        >
          Retry from where it started
        </button>
      )}
      <ErrorLine error={error} className="dialog-error read-only-error" preformatted />
    </div>
  );
}
