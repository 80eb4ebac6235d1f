import { describe, expect, it } from "vitest";

import { MAX_QUERY, MAX_TEXT, match, rank } from "./match";

const labels = (query: string, items: string[]) => rank(query, items, (s) => s).map((r) => r.item);

describe("match", () => {
  it("finds the query's characters in order, ignoring case, and says where", () => {
    expect(match("sett", "Settings…")?.positions).toEqual([0, 1, 2, 3]);
    expect(match("ctxi", "Context inspector")?.positions).toEqual([0, 3, 5, 8]);
    expect(match("CHANGES", "Changes")).not.toBeNull();
  });

  it("finds nothing when a character is missing or out of order", () => {
    expect(match("xyz", "Settings…")).toBeNull();
    expect(match("tes", "Set")).toBeNull();
    expect(match("sgnittes", "Settings")).toBeNull();
  });

  it("matches everything with an empty or blank query", () => {
    expect(match("", "Pop…")).toEqual({ score: 0, positions: [] });
    expect(match("   ", "Pop…")).toEqual({ score: 0, positions: [] });
  });

  it("prefers the start of words, for the positions it reports too", () => {
    // "p" then "o" could be taken from "Import…"; the word "Pop" is the better place.
    expect(match("pop", "Import… Pop")?.positions).toEqual([8, 9, 10]);
  });

  it("ignores what is past its limits", () => {
    // The label's characters past MAX_TEXT are never found.
    expect(match("z", `${"a".repeat(MAX_TEXT)}z`)).toBeNull();
    expect(match("z", `${"a".repeat(MAX_TEXT - 1)}z`)).not.toBeNull();
    // The query's characters past MAX_QUERY are not looked for.
    const label = "b".repeat(MAX_QUERY);
    expect(match(`${label}${"x".repeat(1000)}`, label)).not.toBeNull();
  });
});

describe("rank", () => {
  it("puts word starts and runs before scattered characters", () => {
    expect(labels("pop", ["Plan child: open a pad", "Pop…"])).toEqual([
      "Pop…",
      "Plan child: open a pad",
    ]);
    expect(labels("set", ["Reset the tree", "Settings…"])).toEqual(["Settings…", "Reset the tree"]);
  });

  it("ranks a label equal to the query first", () => {
    expect(labels("changes", ["Changes in the tree", "changes"])).toEqual([
      "changes",
      "Changes in the tree",
    ]);
  });

  it("finds a frame by its title among the focus entries", () => {
    const items = [
      "Focus: Build the app",
      "Focus: Explore transcript rendering codebase",
      "Export…",
    ];
    expect(labels("explore transcript", items)[0]).toBe(
      "Focus: Explore transcript rendering codebase",
    );
  });

  it("keeps the given order for an empty query and for equal scores", () => {
    expect(labels("", ["b", "a", "c"])).toEqual(["b", "a", "c"]);
    expect(labels("a", ["xa", "ya"])).toEqual(["xa", "ya"]);
  });

  it("leaves out what does not match, and ranks the shorter of two equal matches first", () => {
    expect(labels("width", ["Width: Tokens", "Settings…", "Width: Equal"])).toEqual([
      "Width: Equal",
      "Width: Tokens",
    ]);
  });
});
