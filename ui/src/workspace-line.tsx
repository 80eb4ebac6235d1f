// The current tree's workspace folder, in the status bar: the folder the agent's file and
// command tools work in (shortened, the full path in a tooltip), or "No workspace", with a way to
// choose another through the system's folder dialog, or to have none.

import type { Answer, Backend } from "./backend";
import type { ApiError, Tree_Serialize as Tree } from "./bindings";

/** Paths longer than this show only their last folders. */
const SHORT_PATH_CHARS = 40;

/** `path` short enough for the status bar: whole, or "…/" and as many last folders as fit. */
export function shortPath(path: string): string {
  if (path.length <= SHORT_PATH_CHARS) return path;
  const parts = path.split(/(?=[/\\])/);
  let tail = "";
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i] ?? "";
    if (tail !== "" && tail.length + part.length > SHORT_PATH_CHARS - 1) break;
    tail = part + tail;
  }
  return `…${tail}`;
}

/** Asks for a folder with the system's dialog and makes it `tree`'s workspace, if one is chosen. */
export async function chooseWorkspace(
  backend: Backend,
  tree: Tree,
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>,
  onError: (error: ApiError) => void,
): Promise<void> {
  const chosen = await backend.chooseFolder(`The workspace folder of “${tree.title}”`);
  if (chosen.status === "error") onError(chosen.error);
  else if (chosen.data !== null) await run(backend.setTreeWorkspace(tree.id, chosen.data));
}

/** Leaves `tree` without a workspace: the agent gets no file or command tools. */
export function removeWorkspace(
  backend: Backend,
  tree: Tree,
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>,
): Promise<ApiError | null> {
  return run(backend.setTreeWorkspace(tree.id, null));
}

export function WorkspaceLine({
  backend,
  tree,
  run,
  onError,
}: {
  backend: Backend;
  tree: Tree;
  /** Runs a command and reloads the tree; the window shows a refusal. */
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>;
  /** Shows a failure of the folder dialog itself. */
  onError: (error: ApiError) => void;
}) {
  const change = () => chooseWorkspace(backend, tree, run, onError);
  const { workspace } = tree;
  return (
    <span class="status-item workspace-line" data-testid="workspace-line">
      {workspace === null ? (
        <span class="muted" title="The agent has no file or command tools in this tree">
          No workspace
        </span>
      ) : (
        <>
          Workspace{" "}
          <code data-testid="workspace-path" title={workspace}>
            {shortPath(workspace)}
          </code>
        </>
      )}{" "}
      <button
        type="button"
        class="link-button"
        data-testid="change-workspace"
        onClick={() => void change()}
      >
        {workspace === null ? "Choose…" : "Change…"}
      </button>
      {workspace !== null && (
        <button
          type="button"
          class="link-button"
          data-testid="remove-workspace"
          title="Leave the tree without a workspace: the agent gets no file or command tools"
          onClick={() => void removeWorkspace(backend, tree, run)}
        >
          Remove
        </button>
      )}
    </span>
  );
}
