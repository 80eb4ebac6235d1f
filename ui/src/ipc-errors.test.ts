import { describe, expect, it } from "vitest";

import { asApiError, withApiErrors } from "./ipc-errors";

describe("errors at the IPC boundary", () => {
  it("keeps Flame's own {code, message}", () => {
    expect(asApiError({ code: "refused", message: "no" })).toEqual({
      code: "refused",
      message: "no",
    });
  });

  it("turns Tauri's plain-string refusal into an internal error with its text", () => {
    const refusal = "frame_detail not allowed. Command not found";
    expect(asApiError(refusal)).toEqual({ code: "internal", message: refusal });
    expect(asApiError({ reason: 1 })).toEqual({ code: "internal", message: '{"reason":1}' });
    expect(asApiError(undefined).message).toBe("undefined");
  });

  it("wraps every command and leaves answers that succeed alone", async () => {
    const commands = withApiErrors({
      good: (n: number) => Promise.resolve({ status: "ok" as const, data: n * 2 }),
      refused: () => Promise.resolve({ status: "error" as const, error: "not allowed" }),
    });
    expect(await commands.good(21)).toEqual({ status: "ok", data: 42 });
    expect(await commands.refused()).toEqual({
      status: "error",
      error: { code: "internal", message: "not allowed" },
    });
  });
});
