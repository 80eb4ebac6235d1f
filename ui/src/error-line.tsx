import type { ApiError } from "./bindings";

/**
 * A refusal or failure shown in place: the backend's message, with its code on the element for
 * tests and styles. Nothing when there is none. `preformatted` keeps the message's lines, for a
 * refusal that lists files one a line.
 */
export function ErrorLine({
  error,
  testId,
  className = "dialog-error",
  preformatted = false,
}: {
  error: ApiError | null;
  testId?: string;
  className?: string;
  preformatted?: boolean;
}) {
  if (error === null) return null;
  const Element = preformatted ? "pre" : "p";
  return (
    <Element class={className} role="alert" data-testid={testId} data-code={error.code}>
      {error.message}
    </Element>
  );
}
