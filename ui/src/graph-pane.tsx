// The window's left pane: the current tree's menu and the graph's width mode in its header, with
// the Sessions and Import buttons; the last refusal; and the flame graph with its legend, or what
// stands in for it while there is no tree, the tree is read, or it could not be.

import type { Backend } from "./backend";
import { FlameGraph, type FrameRequest, type GraphColour } from "./flame-graph/flame-graph";
import { WEIGHT_MODES, type WeightMode } from "./flame-graph/layout";
import { NewTreeForm, type NewTreeActions } from "./new-tree-form";
import { previewDrawsBy } from "./outline";
import { STATUS_STYLE } from "./status-style";
import type { ShowDialogs } from "./app-dialogs";
import type { TreeLoad } from "./tree-load";
import { TreeMenu } from "./tree-menu";
import type { WindowCommands } from "./window-commands";

/** The width modes as the header's select and the palette name them. */
export const MODE_LABEL: Record<WeightMode, string> = {
  tokens: "Tokens",
  equal: "Equal",
  messages: "Messages",
  time: "Wall time",
  cost: "Cost",
};

export function GraphPane({
  backend,
  tree,
  mode,
  setMode,
  colour,
  commands,
  show,
  newTree,
  onRequest,
}: {
  backend: Backend;
  tree: TreeLoad;
  mode: WeightMode;
  setMode: (mode: WeightMode) => void;
  colour: GraphColour;
  commands: WindowCommands;
  show: ShowDialogs;
  newTree: NewTreeActions;
  onRequest: (request: FrameRequest) => void;
}) {
  const { notice, dispatch } = commands;
  const outline = tree.state === "ready" ? tree.outline : null;
  // While a large tree is read, its preview is drawn, in the same place as the tree will be so the
  // graph's view carries over; it takes no action, as the rest of the window has no tree yet.
  const preview =
    tree.state === "loading" && tree.preview !== undefined && previewDrawsBy(mode)
      ? tree.preview
      : null;
  const drawn = outline ?? preview?.outline ?? null;
  return (
    <section class="pane graph-pane" aria-label="Flame graph" data-testid="graph-pane">
      <header class="pane-header graph-header">
        {outline ? (
          <TreeMenu
            backend={backend}
            outline={outline}
            run={commands.runInPlace}
            onNewTree={() => show({ tree: { kind: "new" } })}
            onDeleteTree={(frames) => show({ tree: { kind: "delete", frames } })}
          />
        ) : (
          <span>Flame graph</span>
        )}
        {preview && (
          <span class="preview-note" data-testid="preview-note">
            Reading all {preview.wholeFrames.toLocaleString("en-US")} frames…
          </span>
        )}
        {outline && (
          <>
            <label class="mode-select">
              Width
              <select
                value={mode}
                data-testid="weight-mode"
                onChange={(e) => setMode(e.currentTarget.value as WeightMode)}
              >
                {WEIGHT_MODES.map((m) => (
                  <option key={m} value={m}>
                    {MODE_LABEL[m]}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        {/* Last, at the right edge, so they stay put while the tree's controls appear. */}
        <button
          type="button"
          class="header-button sessions-button"
          data-testid="sessions-button"
          onClick={() => show({ sessions: true })}
        >
          Sessions…
        </button>
        <button
          type="button"
          class="header-button import-button"
          data-testid="import-button"
          onClick={() => show({ import: true })}
        >
          Import…
        </button>
      </header>
      {notice !== null && (
        <div class="notice" role="alert" data-testid="operation-error" data-code={notice.code}>
          <span>{notice.message}</span>
          <button type="button" aria-label="Dismiss" onClick={() => commands.setNotice(null)}>
            ×
          </button>
        </div>
      )}
      {tree.state === "none" && <NewTreeForm {...newTree} />}
      {tree.state === "failed" && (
        <div class="empty-state" role="alert">
          <p class="empty-title">The tree could not be read</p>
          <p class="error-message">{tree.error.message}</p>
        </div>
      )}
      {tree.state === "loading" && preview === null && (
        <div class="empty-state muted">Reading the tree…</div>
      )}
      {drawn && (
        <FlameGraph
          backend={backend}
          outline={drawn}
          preview={outline === null}
          mode={mode}
          colour={colour}
          onFocus={(frame) => outline && void dispatch({ kind: "focus", id: frame.id })}
          onRequest={(request) => outline && onRequest(request)}
          onMove={(frame, parent, position) =>
            outline && void dispatch({ kind: "move", id: frame.id, parent: parent.id, position })
          }
        />
      )}
      {drawn && (
        <ul class="legend" aria-label="Colours by status">
          {Object.entries(STATUS_STYLE).map(([status, style]) => (
            <li key={status}>
              <span class={`swatch status-${status}`} />
              {style.label}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
