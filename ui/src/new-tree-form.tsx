import { useState } from "preact/hooks";

import type { ApiError } from "./bindings";

/** The graph pane when there is no tree yet: what it is for, and a form to start one. */
export function NewTreeForm({
  onCreate,
}: {
  onCreate: (title: string, criteria: string) => Promise<ApiError | null>;
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
      <p class="empty-title">No tree yet</p>
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
      {error !== null && (
        <p class="dialog-error" role="alert">
          {error.message}
        </p>
      )}
      <button type="submit" class="primary">
        Create the tree
      </button>
    </form>
  );
}
