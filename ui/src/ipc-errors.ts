// Every command's error in Flame's one `{code, message}` shape, whoever produced it.
import type { ApiError } from "./bindings";

/**
 * Flame's commands fail with `{code, message}`, but Tauri itself refuses a command the window is
 * not granted (or cannot deserialise its arguments) with a plain string. Callers show
 * `error.message`, so anything else is turned into an `internal` error carrying its text.
 */
export function asApiError(error: unknown): ApiError {
  if (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  ) {
    return error as ApiError;
  }
  const text = typeof error === "string" ? error : JSON.stringify(error);
  return { code: "internal", message: text ?? String(error) };
}

type Answer = { status: "ok"; data: unknown } | { status: "error"; error: unknown };

/** `commands` with every error answer passed through {@link asApiError}. */
export function withApiErrors<T extends object>(commands: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, command] of Object.entries(commands)) {
    wrapped[name] =
      typeof command === "function"
        ? async (...args: unknown[]) => {
            const answer = await (command as (...a: unknown[]) => Promise<Answer>)(...args);
            return answer.status === "error"
              ? { status: "error", error: asApiError(answer.error) }
              : answer;
          }
        : command;
  }
  return wrapped as T;
}
