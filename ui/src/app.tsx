// The window's state: app info, the current tree's outline, the width mode, the model choice, the
// dialogs (one of each: pop, export, settings, search, palette, sessions) and the last refusal.
// It reloads the outline after each command it runs and whenever `TreeChanged` carries a seq
// newer than the one on screen, and reloads never overlap. The first outline is asked for as the
// script starts (`main.tsx`), since on a large tree that read is most of what opening waits for.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import type {
  ApiError,
  AppInfo,
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";
import { ChatPane, type PanelRequest } from "./chat/chat-pane";
import type { MessageRequest } from "./chat/message-window";
import { useModelChoice } from "./chat/model-picker";
import { PopDialog } from "./chat/pop-dialog";
import { ExportDialog } from "./export-dialog";
import { FrameDialog, type DialogRequest, type DialogResult } from "./frame-dialog";
import { FlameGraph, type FrameRequest, type GraphColour } from "./flame-graph/flame-graph";
import { frameActions } from "./frame-actions";
import { WEIGHT_MODES, type WeightMode } from "./flame-graph/layout";
import { ImportForm } from "./import-form";
import { NewTreeForm } from "./new-tree-form";
import { CommandPalette, usePaletteKey } from "./palette/palette";
import { SearchDialog, revealMessage, useSearchKey } from "./search/search-dialog";
import { StartupError } from "./startup-error";
import { STATUS_STYLE } from "./status-style";
import { SessionsDialog } from "./sessions-dialog";
import { SettingsDialog } from "./settings-dialog";
import { markOnce } from "./marks";
import { StatusBar } from "./status-bar";
import { DeleteTreeDialog, NewTreeDialog, TreeMenu, openTree } from "./tree-menu";
import { WorkspaceLine, chooseWorkspace, removeWorkspace } from "./workspace-line";

type Load =
  { state: "loading" } | { state: "ready"; info: AppInfo } | { state: "failed"; error: ApiError };

/** The current tree as the window knows it. */
type TreeLoad =
  | { state: "loading" }
  | { state: "none" }
  | { state: "ready"; outline: TreeOutline }
  | { state: "failed"; error: ApiError };

const MODE_LABEL: Record<WeightMode, string> = {
  tokens: "Tokens",
  equal: "Equal",
  messages: "Messages",
  time: "Wall time",
  cost: "Cost",
};

/** The whole window: the two panes and the status bar, or the startup error. `firstOutline`, when
 * given, is the current tree's outline already asked for, which the first load takes instead of
 * asking again. */
export function App({
  backend,
  firstOutline,
}: {
  backend: Backend;
  firstOutline?: Promise<Answer<TreeOutline>>;
}) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [tree, setTree] = useState<TreeLoad>({ state: "loading" });
  const [mode, setMode] = useState<WeightMode>("tokens");
  const [colour, setColour] = useState<GraphColour>("status");
  const [notice, setNotice] = useState<ApiError | null>(null);
  const [dialog, setDialog] = useState<DialogRequest | null>(null);
  // Popping from the graph uses the chat's pop dialog: generated, editable results.
  const [popping, setPopping] = useState<FrameOutline | null>(null);
  const [importing, setImporting] = useState(false);
  const [sessionsOpen, setSessionsOpen] = useState(false);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const [treeDialog, setTreeDialog] = useState<
    { kind: "new" } | { kind: "delete"; frames: number } | null
  >(null);
  // Held here rather than in the chat pane, so it outlives a pane with no frame in focus and the
  // graph's pop dialog uses the same model.
  const models = useModelChoice(backend);
  const [exporting, setExporting] = useState<FrameOutline | null>(null);
  // The command palette (Ctrl+Shift+P), and its last request to the chat pane's panels.
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [panelRequest, setPanelRequest] = useState<PanelRequest | null>(null);
  // The chat pane draws only some of a long conversation: a search hit asks it for its message.
  const [messageRequest, setMessageRequest] = useState<MessageRequest | null>(null);
  usePaletteKey(() => setPaletteOpen(true));
  // The search over every tree (Ctrl+F, Ctrl+K, or the palette's "Search…").
  const [searchOpen, setSearchOpen] = useState(false);
  useSearchKey(() => {
    setPaletteOpen(false);
    setSearchOpen(true);
  });
  // The seq of the outline on screen, and whether a reload is running or owed, kept in refs so
  // the change listener (registered once) always sees the current values.
  const shownSeq = useRef(-1);
  const reloading = useRef<"idle" | "running" | "owed">("idle");
  const asked = useRef(firstOutline ?? null);

  const reload = async () => {
    if (reloading.current !== "idle") {
      reloading.current = "owed";
      return;
    }
    reloading.current = "running";
    for (;;) {
      // Marks for the benchmark's account of opening a large tree (tests/bench).
      markOnce("flame:outline-asked");
      const answer = asked.current ?? backend.outline(null);
      asked.current = null;
      const result = await answer;
      markOnce("flame:outline-received");
      if (result.status === "ok") {
        shownSeq.current = result.data.seq;
        setTree({ state: "ready", outline: result.data });
      } else if (result.error.code === "not_found") {
        setTree({ state: "none" });
      } else {
        setTree({ state: "failed", error: result.error });
      }
      // Another reload was asked for while this one ran (`reload` sets it): read again.
      if ((reloading.current as string) === "owed") {
        reloading.current = "running";
        continue;
      }
      reloading.current = "idle";
      return;
    }
  };

  useEffect(() => {
    let live = true;
    let unlisten: (() => void) | null = null;
    void backend.appInfo().then((result) => {
      if (!live) return;
      if (result.status === "ok") {
        setLoad({ state: "ready", info: result.data });
        void reload();
        void backend
          .onTreeChanged((seq) => {
            if (seq > shownSeq.current) void reload();
          })
          .then((stop) => (live ? (unlisten = stop) : stop()));
      } else {
        setLoad({ state: "failed", error: result.error });
      }
    });
    return () => {
      live = false;
      unlisten?.();
    };
  }, [backend]);

  /** Runs a command; a failure is shown with the backend's message. Either way the tree reloads. */
  const run = async <T,>(
    call: Promise<Answer<T>>,
    showFailure = true,
  ): Promise<ApiError | null> => {
    const answer = await call;
    void reload();
    if (answer.status === "error") {
      if (showFailure) setNotice(answer.error);
      return answer.error;
    }
    setNotice(null);
    return null;
  };
  // Frame actions whose refusal the window's notice shows (from the graph, the chat's breadcrumb),
  // and those whose caller (a frame dialog, the pop dialog) shows it in place.
  const dispatch = frameActions(backend, run);
  const dispatchInPlace = frameActions(backend, (call) => run(call, false));

  const onRequest = (request: FrameRequest) => {
    const { frame } = request;
    switch (request.kind) {
      case "start":
      case "resume":
      case "retry":
        return void dispatch({ kind: request.kind, id: frame.id });
      case "plan-at":
        return setDialog(request);
      case "pop":
        return setPopping(frame);
      case "export":
        return setExporting(frame);
      default:
        return setDialog({ kind: request.kind, frame });
    }
  };

  const submit = (result: DialogResult): Promise<ApiError | null> => {
    switch (result.kind) {
      case "push":
      case "plan":
      case "delete":
        return dispatchInPlace(result);
      case "invalidate":
        return dispatchInPlace({
          kind: "invalidate",
          id: result.id,
          reason: result.reason === "" ? null : result.reason,
        });
      case "edit":
        return dispatchInPlace({
          kind: "edit",
          id: result.id,
          title: result.title,
          criteria: result.criteria === "" ? null : result.criteria,
        });
    }
  };

  if (load.state === "failed") {
    return <StartupError error={load.error} />;
  }
  const outline = tree.state === "ready" ? tree.outline : null;
  const focused = outline?.frames.find((f) => f.id === outline.tree.focus) ?? null;
  return (
    <div class="window">
      <main class="panes">
        <section class="pane graph-pane" aria-label="Flame graph" data-testid="graph-pane">
          <header class="pane-header graph-header">
            {outline ? (
              <TreeMenu
                backend={backend}
                outline={outline}
                run={(call) => run(call, false)}
                onNewTree={() => setTreeDialog({ kind: "new" })}
                onDeleteTree={(frames) => setTreeDialog({ kind: "delete", frames })}
              />
            ) : (
              <span>Flame graph</span>
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
              onClick={() => setSessionsOpen(true)}
            >
              Sessions…
            </button>
            <button
              type="button"
              class="header-button import-button"
              data-testid="import-button"
              onClick={() => setImporting(true)}
            >
              Import…
            </button>
          </header>
          {notice !== null && (
            <div class="notice" role="alert" data-testid="operation-error" data-code={notice.code}>
              <span>{notice.message}</span>
              <button type="button" aria-label="Dismiss" onClick={() => setNotice(null)}>
                ×
              </button>
            </div>
          )}
          {tree.state === "none" && (
            <NewTreeForm
              onCreate={(title, criteria, workspace) =>
                run(backend.createTree(title, criteria, workspace), false)
              }
              onChooseFolder={(title) => backend.chooseFolder(title)}
            />
          )}
          {tree.state === "failed" && (
            <div class="empty-state" role="alert">
              <p class="empty-title">The tree could not be read</p>
              <p class="error-message">{tree.error.message}</p>
            </div>
          )}
          {tree.state === "loading" && <div class="empty-state muted">Reading the tree…</div>}
          {outline && (
            <FlameGraph
              backend={backend}
              outline={outline}
              mode={mode}
              colour={colour}
              onFocus={(frame) => void dispatch({ kind: "focus", id: frame.id })}
              onRequest={onRequest}
              onMove={(frame, parent, position) =>
                void dispatch({ kind: "move", id: frame.id, parent: parent.id, position })
              }
            />
          )}
          {outline && (
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
        <section class="pane chat-pane" aria-label="Chat" data-testid="chat-pane">
          {outline !== null && focused !== null ? (
            <ChatPane
              key={outline.tree.id}
              backend={backend}
              outline={outline}
              frame={focused}
              run={(call) => run(call, false)}
              onFocus={(id) => void dispatch({ kind: "focus", id })}
              models={models}
              onOpenSettings={() => setSettingsOpen(true)}
              onOpenDialog={(kind) => (kind === "pop" ? setPopping : setExporting)(focused)}
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
        onOpenSettings={() => setSettingsOpen(true)}
      >
        {outline !== null && (
          <WorkspaceLine backend={backend} tree={outline.tree} run={run} onError={setNotice} />
        )}
      </StatusBar>
      {settingsOpen && (
        <SettingsDialog
          backend={backend}
          onSaved={(saved) => {
            models.update(saved);
            // Saved prices change what frames cost; the outline carries the costs.
            void reload();
          }}
          onClose={() => setSettingsOpen(false)}
        />
      )}
      {dialog !== null && (
        <FrameDialog request={dialog} onSubmit={submit} onClose={() => setDialog(null)} />
      )}
      {popping !== null && (
        <PopDialog
          backend={backend}
          frame={popping.id}
          title={popping.title}
          model={models.chosen}
          dispatch={dispatchInPlace}
          onClose={() => setPopping(null)}
        />
      )}
      {treeDialog?.kind === "new" && (
        <NewTreeDialog
          onCreate={(title, criteria, workspace) =>
            run(backend.createTree(title, criteria, workspace), false)
          }
          onChooseFolder={(title) => backend.chooseFolder(title)}
          onClose={() => setTreeDialog(null)}
        />
      )}
      {treeDialog?.kind === "delete" && outline !== null && (
        <DeleteTreeDialog
          title={outline.tree.title}
          frames={treeDialog.frames}
          onDelete={() => run(backend.deleteTree(outline.tree.id), false)}
          onClose={() => setTreeDialog(null)}
        />
      )}
      {exporting !== null && outline !== null && (
        <ExportDialog
          backend={backend}
          frame={exporting}
          treeTitle={outline.tree.title}
          onClose={() => setExporting(null)}
        />
      )}
      {paletteOpen && (
        // Each action is the handler its button, menu item or key calls (see palette/actions.ts).
        <CommandPalette
          backend={backend}
          context={{
            outline,
            mode,
            modes: WEIGHT_MODES.map((m) => ({ mode: m, label: MODE_LABEL[m] })),
            request: onRequest,
            focus: (id) => void dispatch({ kind: "focus", id }),
            openTree: (entry) => void openTree(backend, (call) => run(call, false), entry),
            newTree: () => setTreeDialog({ kind: "new" }),
            deleteTree: (frames) => setTreeDialog({ kind: "delete", frames }),
            chooseWorkspace: () =>
              outline !== null && void chooseWorkspace(backend, outline.tree, run, setNotice),
            removeWorkspace: () =>
              outline !== null && void removeWorkspace(backend, outline.tree, run),
            importFile: () => setImporting(true),
            openSessions: () => setSessionsOpen(true),
            openSettings: () => setSettingsOpen(true),
            setMode,
            colour,
            setColour,
            togglePanel: (panel) => setPanelRequest({ panel, seq: (panelRequest?.seq ?? 0) + 1 }),
            search: () => setSearchOpen(true),
          }}
          onClose={() => setPaletteOpen(false)}
        />
      )}
      {searchOpen && (
        <SearchDialog
          backend={backend}
          onChoose={(hit) =>
            // Focusing a frame of another tree makes that tree current; then the message is
            // brought into view once its conversation is read.
            void dispatch({ kind: "focus", id: hit.frame }).then((refused) => {
              if (refused === null && hit.place.kind === "message") {
                setMessageRequest({ message: hit.place.id });
                revealMessage(hit.place.id);
              }
            })
          }
          onClose={() => setSearchOpen(false)}
        />
      )}
      {sessionsOpen && (
        <SessionsDialog
          backend={backend}
          run={(call) => run(call, false)}
          onClose={() => setSessionsOpen(false)}
        />
      )}
      {importing && (
        <ImportForm
          onImport={async (path, onProgress) => {
            const answer = await backend.importFile(path, onProgress);
            void reload();
            return answer;
          }}
          onClose={() => setImporting(false)}
        />
      )}
    </div>
  );
}
