import { describe, expect, it } from "vitest";

import { listKey } from "./completion-list";

const plain = { shift: false, composing: false };

describe("the slash list's keys", () => {
  it("moves the highlight down and up, wrapping at both ends", () => {
    expect(listKey("ArrowDown", plain, 3, 0)).toEqual({ kind: "move", to: 1 });
    expect(listKey("ArrowDown", plain, 3, 2)).toEqual({ kind: "move", to: 0 });
    expect(listKey("ArrowUp", plain, 3, 1)).toEqual({ kind: "move", to: 0 });
    expect(listKey("ArrowUp", plain, 3, 0)).toEqual({ kind: "move", to: 2 });
  });

  it("accepts with Tab or Enter, but not with Shift, and closes with Escape", () => {
    expect(listKey("Tab", plain, 2, 0)).toEqual({ kind: "accept" });
    expect(listKey("Enter", plain, 2, 1)).toEqual({ kind: "accept" });
    expect(listKey("Enter", { shift: true, composing: false }, 2, 1)).toEqual({ kind: "none" });
    expect(listKey("Tab", { shift: true, composing: false }, 2, 1)).toEqual({ kind: "none" });
    expect(listKey("Escape", plain, 2, 0)).toEqual({ kind: "close" });
  });

  it("leaves every key alone when the list is empty, during composition, or for other keys", () => {
    expect(listKey("ArrowDown", plain, 0, 0)).toEqual({ kind: "none" });
    expect(listKey("Enter", { shift: false, composing: true }, 3, 0)).toEqual({ kind: "none" });
    expect(listKey("a", plain, 3, 0)).toEqual({ kind: "none" });
  });
});
