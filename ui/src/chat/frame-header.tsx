// The top of the chat pane: the focused frame's title, status and tools (Pop…, Context, Export…),
// then its path to the root, its id, its success criteria, results and the reason for its status.

import type {
  FrameEntry_Serialize as FrameEntry,
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { STATUS_STYLE } from "../status-style";
import { Markdown } from "./markdown";

/** The frames from the root down to `frame`, for the breadcrumb. */
export function pathToRoot(outline: TreeOutline, frame: string): FrameOutline[] {
  const byId = new Map(outline.frames.map((f) => [f.id, f]));
  const path: FrameOutline[] = [];
  for (
    let at = byId.get(frame);
    at !== undefined;
    at = at.parent ? byId.get(at.parent) : undefined
  ) {
    path.unshift(at);
    if (path.length > outline.frames.length) break;
  }
  return path;
}

export function FrameHeader({
  outline,
  frame,
  detail,
  canPop,
  inspecting,
  onPop,
  onToggleInspector,
  onExport,
  onFocus,
}: {
  outline: TreeOutline;
  frame: FrameOutline;
  /** The frame as last read; shown only once it is this frame's. */
  detail: FrameEntry | null;
  /** Whether the backend would pop the frame now, so Pop… is offered. */
  canPop: boolean;
  inspecting: boolean;
  onPop: () => void;
  onToggleInspector: () => void;
  onExport: () => void;
  onFocus: (id: string) => void;
}) {
  const path = pathToRoot(outline, frame.id);
  return (
    <>
      <header
        class="pane-header focused-header"
        data-testid="focused-frame"
        data-frame-id={frame.id}
        data-status={frame.status}
      >
        <span class="focused-title">{frame.title}</span>
        <span class={`status-chip status-${frame.status}`}>{STATUS_STYLE[frame.status].label}</span>
        <span class="header-tools">
          {canPop && (
            <button type="button" data-testid="pop-button" onClick={onPop}>
              Pop…
            </button>
          )}
          <button
            type="button"
            aria-pressed={inspecting}
            data-testid="inspector-toggle"
            onClick={onToggleInspector}
          >
            Context
          </button>
          <button type="button" data-testid="export-button" onClick={onExport}>
            Export…
          </button>
        </span>
      </header>
      <div class="frame-summary">
        <div class="summary-line">
          <nav class="breadcrumb" aria-label="Path to the root" data-testid="chat-breadcrumb">
            {path.map((step, i) => (
              <span key={step.id}>
                {i > 0 && <span class="muted"> › </span>}
                {step.id === frame.id ? (
                  <span aria-current="true">{step.title}</span>
                ) : (
                  <button type="button" class="link-button" onClick={() => onFocus(step.id)}>
                    {step.title}
                  </button>
                )}
              </span>
            ))}
          </nav>
          <code class="muted frame-id" title="The frame's id, accepted by every command">
            {frame.id}
          </code>
        </div>
        {detail !== null && detail.id === frame.id && (
          <>
            <p class="criteria" data-testid="frame-criteria">
              <span class="muted">Done when: </span>
              {detail.success_criteria}
            </p>
            {detail.results !== null && (
              <div class="frame-results" data-testid="frame-results">
                <span class="muted">Results:</span>
                <Markdown text={detail.results} />
              </div>
            )}
            {detail.status_reason !== null && (
              <p class="frame-reason">
                <span class="muted">Reason: </span>
                {detail.status_reason}
              </p>
            )}
          </>
        )}
      </div>
    </>
  );
}
