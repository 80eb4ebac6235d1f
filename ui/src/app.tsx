// The whole window: the graph pane (`graph-pane.tsx`), the chat pane and the status bar, the
// dialogs (`app-dialogs.tsx`), or the startup error. The window's state is grouped by what it is
// for: the app info and the current tree, read and followed (`tree-load.ts`); how commands run
// and where their refusals show (`window-commands.ts`); which dialogs are open; and here the
// graph's width mode and colouring, the model choice, and the chat pane's requests.

import { useState } from "preact/hooks";

import { AppDialogs, useDialogs } from "./app-dialogs";
import type { Answer, Backend } from "./backend";
import type { TreeOutline_Serialize as TreeOutline } from "./bindings";
import { ChatPane, type PanelRequest } from "./chat/chat-pane";
import type { MessageRequest } from "./chat/message-window";
import { useModelChoice } from "./chat/model-picker";
import type { FrameRequest, GraphColour } from "./flame-graph/flame-graph";
import { WEIGHT_MODES, type WeightMode } from "./flame-graph/layout";
import { GraphPane, MODE_LABEL } from "./graph-pane";
import type { NewTreeActions } from "./new-tree-form";
import type { PreviewOutline } from "./outline";
import type { PaletteContext } from "./palette/actions";
import { StartupError } from "./startup-error";
import { StatusBar } from "./status-bar";
import { useTreeLoad } from "./tree-load";
import { openTree } from "./tree-menu";
import { useWindowCommands } from "./window-commands";
import { WorkspaceLine, chooseWorkspace, removeWorkspace } from "./workspace-line";

/** The whole window: the two panes and the status bar, or the startup error. `firstOutline`, when
 * given, is the current tree's outline already asked for, which the first load takes instead of
 * asking again; `firstPreview` its preview, which the graph draws until the outline comes. */
export function App({
  backend,
  firstOutline,
  firstPreview,
}: {
  backend: Backend;
  firstOutline?: Promise<Answer<TreeOutline>>;
  firstPreview?: Promise<Answer<PreviewOutline | null>>;
}) {
  const { load, tree, reload } = useTreeLoad(backend, firstOutline, firstPreview);
  const commands = useWindowCommands(backend, reload);
  const { run, runInPlace, dispatch, setNotice } = commands;
  const [dialogs, show] = useDialogs();
  const [mode, setMode] = useState<WeightMode>("tokens");
  const [colour, setColour] = useState<GraphColour>("status");
  // Held here rather than in the chat pane, so it outlives a pane with no frame in focus and the
  // graph's pop dialog uses the same model.
  const models = useModelChoice(backend);
  // The palette's last request to the chat pane's panels.
  const [panelRequest, setPanelRequest] = useState<PanelRequest | null>(null);
  // The chat pane draws only some of a long conversation: a search hit asks it for its message.
  const [messageRequest, setMessageRequest] = useState<MessageRequest | null>(null);

  const onRequest = (request: FrameRequest) => {
    const { frame } = request;
    switch (request.kind) {
      case "start":
      case "resume":
      case "retry":
        return void dispatch({ kind: request.kind, id: frame.id });
      case "plan-at":
        return show({ frame: request });
      case "pop":
        return show({ pop: frame });
      case "export":
        return show({ export: frame });
      default:
        return show({ frame: { kind: request.kind, frame } });
    }
  };

  const newTree: NewTreeActions = {
    onCreate: (title, criteria, workspace) =>
      runInPlace(backend.createTree(title, criteria, workspace)),
    onChooseFolder: (title) => backend.chooseFolder(title),
  };

  if (load.state === "failed") {
    return <StartupError error={load.error} />;
  }
  const outline = tree.state === "ready" ? tree.outline : null;
  const focused = outline?.frames.find((f) => f.id === outline.tree.focus) ?? null;
  // Each action is the handler its button, menu item or key calls (see palette/actions.ts).
  const palette: Omit<PaletteContext, "allowed" | "trees"> = {
    outline,
    mode,
    modes: WEIGHT_MODES.map((m) => ({ mode: m, label: MODE_LABEL[m] })),
    request: onRequest,
    focus: (id) => void dispatch({ kind: "focus", id }),
    openTree: (entry) => void openTree(backend, runInPlace, entry),
    newTree: () => show({ tree: { kind: "new" } }),
    deleteTree: (frames) => show({ tree: { kind: "delete", frames } }),
    chooseWorkspace: () =>
      outline !== null && void chooseWorkspace(backend, outline.tree, run, setNotice),
    removeWorkspace: () => outline !== null && void removeWorkspace(backend, outline.tree, run),
    importFile: () => show({ import: true }),
    openSessions: () => show({ sessions: true }),
    openSettings: () => show({ settings: true }),
    setMode,
    colour,
    setColour,
    togglePanel: (panel) => setPanelRequest({ panel, seq: (panelRequest?.seq ?? 0) + 1 }),
    search: () => show({ search: true }),
  };
  return (
    <div class="window">
      <main class="panes">
        <GraphPane
          backend={backend}
          tree={tree}
          mode={mode}
          setMode={setMode}
          colour={colour}
          commands={commands}
          show={show}
          newTree={newTree}
          onRequest={onRequest}
        />
        <section class="pane chat-pane" aria-label="Chat" data-testid="chat-pane">
          {outline !== null && focused !== null ? (
            <ChatPane
              key={outline.tree.id}
              backend={backend}
              outline={outline}
              frame={focused}
              run={runInPlace}
              onFocus={(id) => void dispatch({ kind: "focus", id })}
              models={models}
              onOpenSettings={() => show({ settings: true })}
              onOpenDialog={(kind) => show(kind === "pop" ? { pop: focused } : { export: focused })}
              panelRequest={panelRequest}
              messageRequest={messageRequest}
            />
          ) : (
            <>
              <header class="pane-header">Chat</header>
              <div class="empty-state">
                <p class="empty-title">No frame in focus</p>
                <p>The conversation of the focused frame appears here.</p>
              </div>
            </>
          )}
        </section>
      </main>
      <StatusBar
        info={load.state === "ready" ? load.info : null}
        onOpenSettings={() => show({ settings: true })}
      >
        {outline !== null && (
          <WorkspaceLine backend={backend} tree={outline.tree} run={run} onError={setNotice} />
        )}
      </StatusBar>
      <AppDialogs
        backend={backend}
        outline={outline}
        open={dialogs}
        show={show}
        commands={commands}
        models={models}
        reload={reload}
        palette={palette}
        newTree={newTree}
        onMessageRequest={(message) => setMessageRequest({ message })}
      />
    </div>
  );
}
