import { describe, expect, it } from "vitest";

import { completions, parseComposer } from "./slash";

describe("the composer's slash commands", () => {
  it("sends plain text as a message, trimmed", () => {
    expect(parseComposer("  hello\nthere ")).toEqual({ kind: "message", text: "hello\nthere" });
  });

  it("sends // as a message starting with /", () => {
    expect(parseComposer("//push is a word")).toEqual({ kind: "message", text: "/push is a word" });
  });

  it("reads /push and /plan as TITLE :: CRITERIA", () => {
    expect(parseComposer("/push Write tests :: every case covered")).toEqual({
      kind: "push",
      title: "Write tests",
      criteria: "every case covered",
    });
    expect(parseComposer("/plan  Ship it::it is shipped ")).toEqual({
      kind: "plan",
      title: "Ship it",
      criteria: "it is shipped",
    });
  });

  it("refuses /push without criteria or title, saying how to write it", () => {
    expect(parseComposer("/push Write tests")).toEqual({
      kind: "invalid",
      message: "Write it as /push TITLE :: CRITERIA.",
    });
    expect(parseComposer("/plan :: criteria").kind).toBe("invalid");
  });

  it("reads the commands without arguments", () => {
    expect(parseComposer("/pop")).toEqual({ kind: "pop" });
    expect(parseComposer("/status")).toEqual({ kind: "status" });
    expect(parseComposer("/pop now").kind).toBe("invalid");
  });

  it("reads /start with or without a frame id", () => {
    expect(parseComposer("/start")).toEqual({ kind: "start", frame: null });
    expect(parseComposer("/start f0000000003")).toEqual({ kind: "start", frame: "f0000000003" });
    expect(parseComposer("/start a b").kind).toBe("invalid");
  });

  it("reads /invalidate with an optional reason", () => {
    expect(parseComposer("/invalidate")).toEqual({ kind: "invalidate", reason: null });
    expect(parseComposer("/invalidate the plan changed")).toEqual({
      kind: "invalidate",
      reason: "the plan changed",
    });
  });

  it("names the known commands when one is unknown", () => {
    const action = parseComposer("/frobnicate");
    expect(action.kind).toBe("invalid");
    expect(action.kind === "invalid" && action.message).toContain("/push");
  });

  it("offers completions only while a command name is typed", () => {
    expect(completions("/").map((c) => c.name)).toEqual([
      "push",
      "plan",
      "pop",
      "start",
      "status",
      "invalidate",
    ]);
    expect(completions("/p").map((c) => c.name)).toEqual(["push", "plan", "pop"]);
    expect(completions("/st").map((c) => c.name)).toEqual(["start", "status"]);
    expect(completions("/push ")).toEqual([]);
    expect(completions("hello")).toEqual([]);
  });
});
