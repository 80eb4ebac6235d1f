// The small forms behind the flame graph's shortcuts and context menu (popping uses the chat's
// pop dialog, with generated results). Each one collects what
// its command needs and calls it; a refusal is shown in the form with the backend's message,
// and the form stays open so nothing typed is lost.

import { useEffect, useRef, useState } from "preact/hooks";

import type { ApiError, FrameOutline_Serialize as FrameOutline } from "./bindings";
import { DialogButtons, ModalDialog } from "./dialog";
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
  const [identity, setIdentity] = useState<FrameIdentity>({
    title: kind === "edit" ? frame.title : "",
    criteria: "",
  });
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
    const { title, criteria } = identity;
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

  const submit = async () => {
    setBusy(true);
    const failure = await onSubmit(result());
    setBusy(false);
    if (failure === null) onClose();
    else setError(failure);
  };

  const asksIdentity = kind === "push" || kind === "plan" || kind === "plan-at" || kind === "edit";
  return (
    <ModalDialog
      heading={HEADING[kind]}
      testId="frame-dialog"
      formRef={form}
      onEscape={onClose}
      onSubmit={() => void submit()}
    >
      <p class="muted dialog-frame">
        {kind === "push" || kind === "plan" || kind === "plan-at" ? "Under " : ""}“{frame.title}”{" "}
        <code>{frame.id}</code>
        {kind === "plan-at" && request.position !== null ? `, at position ${request.position}` : ""}
      </p>
      {asksIdentity && (
        <IdentityFields
          titleLabel="Title"
          titlePlaceholder="2–5 words"
          criteriaLabel={
            kind === "edit" ? "Success criteria (empty: unchanged)" : "Success criteria"
          }
          value={identity}
          onChange={setIdentity}
        />
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
      <DialogButtons onCancel={onClose}>
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
      </DialogButtons>
    </ModalDialog>
  );
}

/** What a frame is made with: its title and its success criteria. */
export interface FrameIdentity {
  title: string;
  criteria: string;
}

/** The title and success-criteria fields of a form that makes (or edits) a frame or a tree. */
export function IdentityFields({
  titleLabel,
  titlePlaceholder,
  criteriaLabel = "Success criteria",
  value,
  onChange,
}: {
  titleLabel: string;
  titlePlaceholder: string;
  criteriaLabel?: string;
  value: FrameIdentity;
  /** Given how to change the value, as a state setter takes it. */
  onChange: (change: (value: FrameIdentity) => FrameIdentity) => void;
}) {
  return (
    <>
      <label>
        {titleLabel}
        <input
          name="title"
          value={value.title}
          onInput={(e) => {
            const title = e.currentTarget.value;
            onChange((before) => ({ ...before, title }));
          }}
          placeholder={titlePlaceholder}
        />
      </label>
      <label>
        {criteriaLabel}
        <textarea
          name="criteria"
          rows={3}
          value={value.criteria}
          onInput={(e) => {
            const criteria = e.currentTarget.value;
            onChange((before) => ({ ...before, criteria }));
          }}
          placeholder="What, concretely, defines done"
        />
      </label>
    </>
  );
}
