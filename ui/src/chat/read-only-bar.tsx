// In place of the composer for a frame the person cannot chat in: what it is, and the action that
// reopens it (Start a planned frame, Resume a blocked one, Retry a failed one as a new frame),
// offered only when the backend's allowed actions say it would be accepted.

import { useState } from "preact/hooks";

import type { ApiError, FrameActions, FrameOutline_Serialize as FrameOutline } from "../bindings";
import { ErrorLine } from "../error-line";
import type { DispatchFrameAction, FrameAction } from "../frame-actions";
import { STATUS_STYLE } from "../status-style";

export function ReadOnlyBar({
  frame,
  actions,
  dispatch,
}: {
  frame: FrameOutline;
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
      <ErrorLine error={error} />
    </div>
  );
}
