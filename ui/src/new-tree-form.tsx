import { useState } from "preact/hooks";

import type { ApiError } from "./bindings";
import { ErrorLine } from "./error-line";

/**
 * A form to start a tree, with what a tree is for: the graph pane's content when there is no
 * tree, and the New tree dialog's (with a heading and a Cancel button) when there is.
 */
export function NewTreeForm({
  onCreate,
  heading = "No tree yet",
  onCancel,
}: {
  onCreate: (title: string, criteria: string) => Promise<ApiError | null>;
  heading?: string;
  onCancel?: () => void;
}) {
  const [title, setTitle] = useState("");
  const [criteria, setCriteria] = useState("");
  const [error, setError] = useState<ApiError | null>(null);
  return (
    <form
      class="empty-state new-tree"
      data-testid="new-tree-form"
      onSubmit={(event) => {
        event.preventDefault();
        void onCreate(title, criteria).then(setError);
      }}
    >
      <p class="empty-title">{heading}</p>
      <p>
        A tree is one piece of work. Its root frame is the goal; subtasks become frames below it,
        drawn here as a flame graph.
      </p>
      <label>
        Goal
        <input
          name="title"
          value={title}
          onInput={(e) => setTitle(e.currentTarget.value)}
          placeholder="Build the application"
        />
      </label>
      <label>
        Success criteria
        <textarea
          name="criteria"
          rows={3}
          value={criteria}
          onInput={(e) => setCriteria(e.currentTarget.value)}
          placeholder="What, concretely, defines done"
        />
      </label>
      <ErrorLine error={error} />
      <div class="dialog-buttons">
        {onCancel !== undefined && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" class="primary">
          Create the tree
        </button>
      </div>
    </form>
  );
}
