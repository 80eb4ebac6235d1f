// The top of the chat pane: the focused frame's title, status and tools (Pop…, Changes, Context,
// Export…), then its path to the root, its id, its success criteria, results, the reason for its
// status, when its changes were rolled back, and the files its own tool calls changed.

import { useState } from "preact/hooks";

import type {
  FileTrail,
  FrameDetail_Serialize as FrameDetail,
  FrameOutline_Serialize as FrameOutline,
  GatewaySavings,
  TreeOutline_Serialize as TreeOutline,
} from "../bindings";
import { costOf } from "../cost-text";
import { knownParentIndexes } from "../outline";
import { STATUS_STYLE } from "../status-style";
import { formatTime } from "./changes-view";
import { FrameCostLine, GatewayCostLine } from "./frame-cost";
import { FrameCriteria, FrameResults } from "./long-text";

/** The most steps a breadcrumb shows before its middle folds into a "N more" button: a deep
 * frame's whole path (a generated tree's reaches 31 steps) would push its conversation out of
 * view. */
export const BREADCRUMB_STEPS = 6;

/** The steps of `path` a breadcrumb shows — the root, then the last steps down to the frame —
 * and how many folded between them (0 when all are shown or `open`). */
export function breadcrumbSteps<T>(path: T[], open: boolean): { steps: T[]; folded: number } {
  if (open || path.length <= BREADCRUMB_STEPS) return { steps: path, folded: 0 };
  const tail = path.slice(path.length - (BREADCRUMB_STEPS - 1));
  return { steps: [path[0]!, ...tail], folded: path.length - BREADCRUMB_STEPS };
}

/** The frames from the root down to `frame`, for the breadcrumb. */
export function pathToRoot(outline: TreeOutline, frame: string): FrameOutline[] {
  // An outline from the backend knows its parents by index: no map of a large tree's every frame
  // is made at each render.
  const parents = knownParentIndexes(outline.frames);
  if (parents !== undefined) {
    const path: FrameOutline[] = [];
    for (
      let at = outline.frames.findIndex((f) => f.id === frame);
      at >= 0 && path.length <= outline.frames.length;
      at = parents[at] === at ? -1 : parents[at]!
    ) {
      path.unshift(outline.frames[at]!);
    }
    return path;
  }
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

/** How many files the frame changed, listing them (and the files it read) when opened. */
export function ChangedFiles({ files }: { files: FileTrail }) {
  if (files.changed.length === 0 && files.read.length === 0) return null;
  const count = files.changed.length;
  return (
    <details class="frame-files" data-testid="frame-files" data-changed={count}>
      <summary title={files.changed.join("\n")}>
        {count === 0 ? "No files changed" : `${count} ${count === 1 ? "file" : "files"} changed`}
        {files.read.length > 0 && <span class="muted">, {files.read.length} read</span>}
      </summary>
      {count > 0 && (
        <ul class="frame-files-changed" aria-label="Files changed">
          {files.changed.map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      )}
      {files.read.length > 0 && (
        <ul class="frame-files-read muted" aria-label="Files read">
          {files.read.map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

export function FrameHeader({
  outline,
  frame,
  detail,
  canPop,
  inspecting,
  showingChanges,
  onPop,
  onToggleInspector,
  onToggleChanges,
  onExport,
  onFocus,
  gateway = null,
}: {
  outline: TreeOutline;
  frame: FrameOutline;
  /** The frame as last read; shown only once it is this frame's. */
  detail: FrameDetail | null;
  /** Whether the backend would pop the frame now, so Pop… is offered. */
  canPop: boolean;
  inspecting: boolean;
  /** Whether the Changes panel stands in for the conversation. */
  showingChanges: boolean;
  onPop: () => void;
  onToggleInspector: () => void;
  onToggleChanges: () => void;
  onExport: () => void;
  onFocus: (id: string) => void;
  /** What the gateway's calls in the frame were billed and would have cost, if it made any. */
  gateway?: GatewaySavings | null;
}) {
  const path = pathToRoot(outline, frame.id);
  // A folded path opens on request, for this frame only: the next frame's starts folded.
  const [pathOpenFor, setPathOpenFor] = useState<string | null>(null);
  const crumbs = breadcrumbSteps(path, pathOpenFor === frame.id);
  // The count is the files the frame's own calls changed, known once the frame has been read.
  const changed = detail !== null && detail.id === frame.id ? detail.files.changed.length : null;
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
            aria-pressed={showingChanges}
            data-testid="changes-toggle"
            title="The files this frame changed, and rolling them back"
            onClick={onToggleChanges}
          >
            Changes{changed !== null && changed > 0 ? ` (${changed})` : ""}
          </button>
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
            {crumbs.steps.map((step, i) => (
              <span key={step.id}>
                {i > 0 && <span class="muted"> › </span>}
                {i === 1 && crumbs.folded > 0 && (
                  <>
                    <button
                      type="button"
                      class="link-button muted"
                      data-testid="breadcrumb-more"
                      title="Show the whole path to the root"
                      onClick={() => setPathOpenFor(frame.id)}
                    >
                      {crumbs.folded} more
                    </button>
                    <span class="muted"> › </span>
                  </>
                )}
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
        <FrameCostLine cost={costOf(outline, frame.id)} />
        <GatewayCostLine savings={gateway} />
        {detail !== null && detail.id === frame.id && (
          <>
            {/* Long criteria and results are shown short (see long-text.tsx), so the conversation
                stays in view; keyed by the frame, so the next frame starts short again. */}
            <FrameCriteria key={`criteria-${frame.id}`} criteria={detail.success_criteria} />
            {detail.results !== null && (
              <FrameResults
                key={`results-${frame.id}`}
                results={detail.results}
                compacted={detail.results_compacted}
              />
            )}
            {frame.rolled_back_at !== null && (
              <p class="frame-rolled-back" data-testid="frame-rolled-back">
                ↶ Rolled back {formatTime(frame.rolled_back_at)}: its files were put back as they
                were when it started.
              </p>
            )}
            {detail.status_reason !== null && (
              <p class="frame-reason">
                <span class="muted">Reason: </span>
                {detail.status_reason}
              </p>
            )}
            <ChangedFiles files={detail.files} />
          </>
        )}
      </div>
    </>
  );
}
