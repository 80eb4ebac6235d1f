import { useState } from "preact/hooks";

import type { Answer } from "./backend";
import type { ApiError } from "./bindings";
import { DialogButtons } from "./dialog";
import { ErrorLine } from "./error-line";
import { type FrameIdentity, IdentityFields } from "./frame-dialog";

/** What the new-tree form asks the backend for. */
export interface NewTreeActions {
  /**
   * Creates the tree; `workspace` is the folder its agent works in (null: none). Resolves to the
   * refusal, if any, which the form shows in place, keeping what was typed.
   */
  onCreate: (title: string, criteria: string, workspace: string | null) => Promise<ApiError | null>;
  /** The system's folder dialog; null when the person cancels it. */
  onChooseFolder: (title: string) => Promise<Answer<string | null>>;
}

/**
 * A form to start a tree, with what a tree is for: the graph pane's content when there is no
 * tree, and the New tree dialog's (with a heading and a Cancel button) when there is.
 */
export function NewTreeForm({
  onCreate,
  onChooseFolder,
  heading = "No tree yet",
  onCancel,
}: NewTreeActions & {
  heading?: string;
  onCancel?: () => void;
}) {
  const [identity, setIdentity] = useState<FrameIdentity>({ title: "", criteria: "" });
  const [workspace, setWorkspace] = useState("");
  const [error, setError] = useState<ApiError | null>(null);

  const choose = async () => {
    const chosen = await onChooseFolder("The tree's workspace folder");
    if (chosen.status === "error") setError(chosen.error);
    else if (chosen.data !== null) setWorkspace(chosen.data);
  };
  return (
    <form
      class="empty-state new-tree"
      data-testid="new-tree-form"
      onSubmit={(event) => {
        event.preventDefault();
        const { title, criteria } = identity;
        const folder = workspace.trim();
        void onCreate(title, criteria, folder === "" ? null : folder).then(setError);
      }}
    >
      <p class="empty-title">{heading}</p>
      <p>
        A tree is one piece of work. Its root frame is the goal; subtasks become frames below it,
        drawn here as a flame graph.
      </p>
      <IdentityFields
        titleLabel="Goal"
        titlePlaceholder="Build the application"
        value={identity}
        onChange={setIdentity}
      />
      <label>
        Workspace folder
        <span class="folder-field">
          <input
            name="workspace"
            data-testid="new-tree-workspace"
            value={workspace}
            onInput={(e) => setWorkspace(e.currentTarget.value)}
            placeholder="none: the agent gets no file or command tools"
          />
          <button type="button" data-testid="choose-workspace" onClick={() => void choose()}>
            Choose…
          </button>
        </span>
      </label>
      <p class="muted field-note">
        The folder the agent may read, change and run commands in, each as the settings allow.
      </p>
      <ErrorLine error={error} />
      <DialogButtons onCancel={onCancel}>
        <button type="submit" class="primary">
          Create the tree
        </button>
      </DialogButtons>
    </form>
  );
}
