// What the app's dialogs share: a modal over a backdrop that Escape closes, headed by the heading
// that names it, and the row of buttons at its foot.

import type { ComponentChildren, Ref } from "preact";

/**
 * A modal dialog over a backdrop, named by its heading: a form when it has something to submit
 * (`onSubmit`, called in place of the browser's own submission). Escape calls `onEscape` (a
 * dialog that may not close now ignores it there).
 */
export function ModalDialog({
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
  /** The dialog's `data-testid`; its heading's id is made from it. */
  testId: string;
  /** Classes besides `dialog`. */
  className?: string;
  /** `alertdialog` for a dialog that asks before something is lost. */
  role?: "dialog" | "alertdialog";
  formRef?: Ref<HTMLFormElement>;
  onEscape: () => void;
  onSubmit?: () => void;
  children: ComponentChildren;
}) {
  const headingId = `${testId}-heading`;
  const dialog = {
    class: className === undefined ? "dialog" : `dialog ${className}`,
    role,
    "aria-modal": "true",
    "aria-labelledby": headingId,
    "data-testid": testId,
  } as const;
  const content = (
    <>
      <h2 id={headingId}>{heading}</h2>
      {children}
    </>
  );
  return (
    <div class="dialog-backdrop" onKeyDown={(e) => e.key === "Escape" && onEscape()}>
      {onSubmit === undefined ? (
        <div {...dialog}>{content}</div>
      ) : (
        <form
          {...dialog}
          ref={formRef ?? null}
          onSubmit={(event) => {
            event.preventDefault();
            onSubmit();
          }}
        >
          {content}
        </form>
      )}
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
