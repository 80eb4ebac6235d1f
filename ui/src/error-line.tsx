import type { ApiError } from "./bindings";

/**
 * A refusal or failure shown in place: the backend's message, with its code on the element for
 * tests and styles. Nothing when there is none.
 */
export function ErrorLine({ error, testId }: { error: ApiError | null; testId?: string }) {
  if (error === null) return null;
  return (
    <p class="dialog-error" role="alert" data-testid={testId} data-code={error.code}>
      {error.message}
    </p>
  );
}
