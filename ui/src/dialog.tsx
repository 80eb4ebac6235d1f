// What the app's form dialogs share: a modal form over a backdrop that Escape closes, headed by
// the heading that names it, and the row of buttons at its foot.

import type { ComponentChildren, Ref } from "preact";

/**
 * A form shown as a modal dialog, named by its heading. Escape calls `onEscape` (a dialog that
 * may not close now ignores it there); submitting calls `onSubmit` in place of the browser's own
 * submission.
 */
export function FormDialog({
  heading,
  testId,
  className,
  role = "dialog",
  formRef,
  onEscape,
  onSubmit,
  children,
}: {
  heading: ComponentChildren;
  /** The form's `data-testid`; its heading's id is made from it. */
  testId: string;
  /** Classes besides `dialog`. */
  className?: string;
  /** `alertdialog` for a dialog that asks before something is lost. */
  role?: "dialog" | "alertdialog";
  formRef?: Ref<HTMLFormElement>;
  onEscape: () => void;
  onSubmit: () => void;
  children: ComponentChildren;
}) {
  const headingId = `${testId}-heading`;
  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onEscape()}>
      <form
        ref={formRef ?? null}
        class={className === undefined ? "dialog" : `dialog ${className}`}
        role={role}
        aria-modal="true"
        aria-labelledby={headingId}
        data-testid={testId}
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit();
        }}
      >
        <h2 id={headingId}>{heading}</h2>
        {children}
      </form>
    </div>
  );
}

/** The buttons at a dialog's foot: Cancel, when the dialog can be cancelled, then its own. */
export function DialogButtons({
  onCancel,
  children,
}: {
  onCancel?: (() => void) | undefined;
  children: ComponentChildren;
}) {
  return (
    <div class="dialog-buttons">
      {onCancel !== undefined && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
      {children}
    </div>
  );
}
