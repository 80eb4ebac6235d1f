// The trees of the data directory, above the flame graph: which one is shown, a new one, and
// deleting one. Deleting is the one operation that removes history, so it is asked for in a
// dialog that says what goes; the backend does the rest.

import { useEffect, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import type { ApiError, TreeListEntry, TreeOutline_Serialize as TreeOutline } from "./bindings";
import { NewTreeForm, type NewTreeActions } from "./new-tree-form";
import { ModalDialog } from "./dialog";
import { ErrorLine } from "./error-line";

/** Makes `entry` the current tree: focusing a tree's focused frame is what does it. */
export function openTree(
  backend: Backend,
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>,
  entry: TreeListEntry,
): Promise<ApiError | null> {
  return run(backend.focusFrame(entry.tree.focus));
}

export function TreeMenu({
  backend,
  outline,
  run,
  onNewTree,
  onDeleteTree,
}: {
  backend: Backend;
  outline: TreeOutline;
  /** Runs a command and reloads the tree; resolves to the refusal, if any. */
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>;
  onNewTree: () => void;
  /** Asks to delete the tree shown, which has `frames` frames. */
  onDeleteTree: (frames: number) => void;
}) {
  const [trees, setTrees] = useState<TreeListEntry[]>([]);

  // The list is short and changes rarely; reading it with every change of the tree on screen
  // keeps the counts and the current mark right without an event of its own.
  useEffect(() => {
    let live = true;
    void backend.listTrees().then((answer) => {
      if (live && answer.status === "ok") setTrees(answer.data);
    });
    return () => {
      live = false;
    };
  }, [backend, outline.seq, outline.tree.id]);

  const open = (id: string) => {
    const entry = trees.find((t) => t.tree.id === id);
    if (entry !== undefined) void openTree(backend, run, entry);
  };

  const current = outline.tree;
  const frameCount =
    trees.find((t) => t.tree.id === current.id)?.frame_count ?? outline.frames.length;
  return (
    <div class="tree-menu">
      <select
        class="tree-select"
        data-testid="tree-select"
        aria-label="Tree"
        value={current.id}
        onChange={(e) => open(e.currentTarget.value)}
      >
        {/* The current tree is listed even before the list has been read. */}
        {(trees.length > 0 ? trees.map((t) => t.tree) : [current]).map((tree) => (
          <option key={tree.id} value={tree.id}>
            {tree.title}
          </option>
        ))}
      </select>
      <button type="button" class="header-button" data-testid="new-tree-button" onClick={onNewTree}>
        New tree…
      </button>
      <button
        type="button"
        class="header-button"
        data-testid="delete-tree-button"
        onClick={() => onDeleteTree(frameCount)}
      >
        Delete tree…
      </button>
    </div>
  );
}

/** The New tree dialog: the new-tree form with a heading and Cancel. */
export function NewTreeDialog({
  onCreate,
  onChooseFolder,
  onClose,
}: NewTreeActions & { onClose: () => void }) {
  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-label="New tree">
        <NewTreeForm
          heading="New tree"
          onCancel={onClose}
          onChooseFolder={onChooseFolder}
          onCreate={async (title, criteria, workspace) => {
            const failure = await onCreate(title, criteria, workspace);
            if (failure === null) onClose();
            return failure;
          }}
        />
      </div>
    </div>
  );
}

/** Asks before a tree is deleted, saying what goes; a refusal stays in the dialog. */
export function DeleteTreeDialog({
  title,
  frames,
  onDelete,
  onClose,
}: {
  title: string;
  frames: number;
  onDelete: () => Promise<ApiError | null>;
  onClose: () => void;
}) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <ModalDialog
      heading={`Delete “${title}”?`}
      testId="delete-tree-dialog"
      role="alertdialog"
      onEscape={onClose}
      onSubmit={() => {
        setBusy(true);
        void onDelete().then((failure) => {
          setBusy(false);
          if (failure === null) onClose();
          else setError(failure);
        });
      }}
    >
      <p>
        Its {frames === 1 ? "frame" : `${frames} frames`}, their conversations and their logs are
        removed for good. Nothing else in Flame is ever deleted; export the tree first if you may
        want it back.
      </p>
      <ErrorLine error={error} />
      <div class="dialog-buttons">
        <button type="button" onClick={onClose} autofocus>
          Cancel
        </button>
        <button type="submit" class="danger" disabled={busy}>
          Delete the tree
        </button>
      </div>
    </ModalDialog>
  );
}
