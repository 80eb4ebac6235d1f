// The small forms behind the flame graph's shortcuts and context menu (popping uses the chat's
// pop dialog, with generated results). Each one collects what
// its command needs and calls it; a refusal is shown in the form with the backend's message,
// and the form stays open so nothing typed is lost.

import { useEffect, useRef, useState } from "preact/hooks";

import type { ApiError, FrameOutline_Serialize as FrameOutline } from "./bindings";
import { ErrorLine } from "./error-line";

export type DialogRequest =
  | { kind: "push" | "plan" | "invalidate" | "edit" | "delete"; frame: FrameOutline }
  | { kind: "plan-at"; frame: FrameOutline; position: number | null };

/** What a submitted form asks for; the app calls the matching command. */
export type DialogResult =
  | { kind: "push"; parent: string; title: string; criteria: string }
  | { kind: "plan"; parent: string; position: number | null; title: string; criteria: string }
  | { kind: "invalidate"; id: string; reason: string }
  | { kind: "edit"; id: string; title: string; criteria: string }
  | { kind: "delete"; id: string };

const HEADING: Record<DialogRequest["kind"], string> = {
  push: "Push a child frame",
  plan: "Plan a child frame",
  "plan-at": "Plan a child frame",
  invalidate: "Invalidate the frame",
  edit: "Edit the planned frame",
  delete: "Delete the planned frame",
};

export function FrameDialog({
  request,
  onSubmit,
  onClose,
}: {
  request: DialogRequest;
  onSubmit: (result: DialogResult) => Promise<ApiError | null>;
  onClose: () => void;
}) {
  const { frame, kind } = request;
  const [title, setTitle] = useState(kind === "edit" ? frame.title : "");
  const [criteria, setCriteria] = useState("");
  const [text, setText] = useState("");
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    const first = form.current?.querySelector<HTMLElement>(
      "input, select, textarea, button[type=submit]",
    );
    first?.focus();
  }, []);

  const result = (): DialogResult => {
    switch (kind) {
      case "push":
        return { kind, parent: frame.id, title, criteria };
      case "plan":
        return { kind: "plan", parent: frame.id, position: null, title, criteria };
      case "plan-at":
        return { kind: "plan", parent: frame.id, position: request.position, title, criteria };
      case "invalidate":
        return { kind, id: frame.id, reason: text };
      case "edit":
        return { kind, id: frame.id, title, criteria };
      case "delete":
        return { kind, id: frame.id };
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const failure = await onSubmit(result());
    setBusy(false);
    if (failure === null) onClose();
    else setError(failure);
  };

  const identity = kind === "push" || kind === "plan" || kind === "plan-at" || kind === "edit";
  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        ref={form}
        class="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="dialog-heading"
        data-testid="frame-dialog"
        onSubmit={(e) => void submit(e)}
      >
        <h2 id="dialog-heading">{HEADING[kind]}</h2>
        <p class="muted dialog-frame">
          {kind === "push" || kind === "plan" || kind === "plan-at" ? "Under " : ""}“{frame.title}”{" "}
          <code>{frame.id}</code>
          {kind === "plan-at" && request.position !== null
            ? `, at position ${request.position}`
            : ""}
        </p>
        {identity && (
          <>
            <label>
              Title
              <input
                name="title"
                value={title}
                onInput={(e) => setTitle(e.currentTarget.value)}
                placeholder="2–5 words"
              />
            </label>
            <label>
              Success criteria{kind === "edit" ? " (empty: unchanged)" : ""}
              <textarea
                name="criteria"
                rows={3}
                value={criteria}
                onInput={(e) => setCriteria(e.currentTarget.value)}
                placeholder="What, concretely, defines done"
              />
            </label>
          </>
        )}
        {kind === "invalidate" && (
          <label>
            Reason (optional)
            <input name="reason" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </label>
        )}
        {kind === "delete" && (
          <p>
            The frame and its planned subtree are removed. Frames with messages cannot be deleted;
            invalidate them instead.
          </p>
        )}
        <ErrorLine error={error} />
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {kind === "delete"
              ? "Delete"
              : kind === "invalidate"
                ? "Invalidate"
                : kind === "edit"
                  ? "Save"
                  : kind === "push"
                    ? "Push"
                    : "Plan"}
          </button>
        </div>
      </form>
    </div>
  );
}
