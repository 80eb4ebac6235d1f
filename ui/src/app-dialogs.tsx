// The window's dialogs, one of each kind at most: settings, a frame dialog, pop, new and delete
// tree, export, the command palette, search, sessions and import, with the keys that open the
// palette (Ctrl+Shift+P) and the search (Ctrl+F, Ctrl+K).

import { useState } from "preact/hooks";

import type { Backend } from "./backend";
import type {
  FrameOutline_Serialize as FrameOutline,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";
import type { ModelChoice } from "./chat/model-picker";
import { PopDialog } from "./chat/pop-dialog";
import { ExportDialog } from "./export-dialog";
import { FrameDialog, type DialogRequest } from "./frame-dialog";
import { ImportForm } from "./import-form";
import type { NewTreeActions } from "./new-tree-form";
import { CommandPalette } from "./palette/palette";
import type { PaletteContext } from "./palette/actions";
import { usePaletteKey } from "./palette/palette";
import { SearchDialog, revealMessage, useSearchKey } from "./search/search-dialog";
import { SessionsDialog } from "./sessions-dialog";
import { SettingsDialog } from "./settings-dialog";
import { DeleteTreeDialog, NewTreeDialog } from "./tree-menu";
import type { WindowCommands } from "./window-commands";

/** Which dialogs are open, and on what. */
export interface OpenDialogs {
  frame: DialogRequest | null;
  /** Popping from the graph uses the chat's pop dialog: generated, editable results. */
  pop: FrameOutline | null;
  export: FrameOutline | null;
  tree: { kind: "new" } | { kind: "delete"; frames: number } | null;
  settings: boolean;
  palette: boolean;
  search: boolean;
  sessions: boolean;
  import: boolean;
}

const CLOSED: OpenDialogs = {
  frame: null,
  pop: null,
  export: null,
  tree: null,
  settings: false,
  palette: false,
  search: false,
  sessions: false,
  import: false,
};

/** Opens or closes dialogs: the ones `change` names, leaving the others as they are. */
export type ShowDialogs = (change: Partial<OpenDialogs>) => void;

/** The open dialogs, and the keys that open the palette and the search. */
export function useDialogs(): [OpenDialogs, ShowDialogs] {
  const [open, setOpen] = useState<OpenDialogs>(CLOSED);
  // From the current state, so changes that arrive before a render all count.
  const show: ShowDialogs = (change) => setOpen((current) => ({ ...current, ...change }));
  usePaletteKey(() => show({ palette: true }));
  // The search over every tree (Ctrl+F, Ctrl+K, or the palette's "Search…").
  useSearchKey(() => show({ palette: false, search: true }));
  return [open, show];
}

export function AppDialogs({
  backend,
  outline,
  open,
  show,
  commands,
  models,
  reload,
  palette,
  newTree,
  onMessageRequest,
}: {
  backend: Backend;
  outline: TreeOutline | null;
  open: OpenDialogs;
  show: ShowDialogs;
  commands: WindowCommands;
  models: ModelChoice;
  reload: () => Promise<void>;
  /** What the palette offers: each action is the handler its button, menu item or key calls. */
  palette: Omit<PaletteContext, "allowed" | "trees">;
  newTree: NewTreeActions;
  /** A search hit in a message: the chat pane is asked to show that message. */
  onMessageRequest: (message: number) => void;
}) {
  const { runInPlace, dispatch, dispatchInPlace } = commands;
  return (
    <>
      {open.settings && (
        <SettingsDialog
          backend={backend}
          tree={outline?.tree.id ?? null}
          onSaved={(saved) => {
            models.update(saved);
            // Saved prices change what frames cost; the outline carries the costs.
            void reload();
          }}
          onClose={() => show({ settings: false })}
        />
      )}
      {open.frame !== null && (
        <FrameDialog
          request={open.frame}
          onSubmit={commands.submit}
          onClose={() => show({ frame: null })}
        />
      )}
      {open.pop !== null && (
        <PopDialog
          backend={backend}
          frame={open.pop.id}
          title={open.pop.title}
          model={models.chosen}
          dispatch={dispatchInPlace}
          onClose={() => show({ pop: null })}
        />
      )}
      {open.tree?.kind === "new" && (
        <NewTreeDialog {...newTree} onClose={() => show({ tree: null })} />
      )}
      {open.tree?.kind === "delete" && outline !== null && (
        <DeleteTreeDialog
          title={outline.tree.title}
          frames={open.tree.frames}
          onDelete={() => runInPlace(backend.deleteTree(outline.tree.id))}
          onClose={() => show({ tree: null })}
        />
      )}
      {open.export !== null && outline !== null && (
        <ExportDialog
          backend={backend}
          frame={open.export}
          treeTitle={outline.tree.title}
          onClose={() => show({ export: null })}
        />
      )}
      {open.palette && (
        <CommandPalette
          backend={backend}
          context={palette}
          onClose={() => show({ palette: false })}
        />
      )}
      {open.search && (
        <SearchDialog
          backend={backend}
          onChoose={(hit) =>
            // Focusing a frame of another tree makes that tree current; then the message is
            // brought into view once its conversation is read.
            void dispatch({ kind: "focus", id: hit.frame }).then((refused) => {
              if (refused === null && hit.place.kind === "message") {
                onMessageRequest(hit.place.id);
                revealMessage(hit.place.id);
              }
            })
          }
          onClose={() => show({ search: false })}
        />
      )}
      {open.sessions && (
        <SessionsDialog
          backend={backend}
          run={runInPlace}
          onClose={() => show({ sessions: false })}
        />
      )}
      {open.import && (
        <ImportForm
          onImport={async (path, onProgress) => {
            const answer = await backend.importFile(path, onProgress);
            void reload();
            return answer;
          }}
          onClose={() => show({ import: false })}
        />
      )}
    </>
  );
}
