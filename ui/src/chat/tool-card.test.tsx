import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  Message_Serialize as Message,
  ToolDetail_Serialize as ToolDetail,
  Value,
} from "../bindings";
import { callNames, callSubject, MessageView } from "./messages";
import { formatDuration, toolSummary } from "./tool-card";

afterEach(() => {
  document.body.replaceChildren();
});

/** A stored tool result of `name` with `content`, its detail and whether it failed. */
function result(
  name: string,
  content: string,
  detail: ToolDetail | null,
  isError = false,
): Message {
  return {
    id: 7,
    frame: "f0000000002",
    role: "tool",
    content,
    tool_calls: null,
    tool_result: {
      tool_call_id: "c1",
      name,
      is_error: isError,
      ...(detail === null ? {} : { detail }),
    },
    tokens: 1,
    model: null,
    usage: null,
    created_at: 0,
    interrupted: false,
  };
}

async function show(message: Message, callName?: string): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(() => render(<MessageView message={message} callName={callName} />, root));
  return root;
}

function card(root: HTMLElement): HTMLElement {
  const found = root.querySelector<HTMLElement>("[data-testid=tool-card]");
  if (found === null) throw new Error("no tool card");
  return found;
}

const text = (root: ParentNode, selector: string) => root.querySelector(selector)?.textContent;

const COMMAND: ToolDetail = {
  kind: "command",
  command: "cargo test -p flame-workspace",
  exit_code: 0,
  ending: "exited",
  duration_ms: 12_400,
  output_bytes: 2048,
  output_file: null,
  place: { kind: "sandbox", network: false },
};

describe("a workspace tool's result in the conversation", () => {
  it("says which lines of how many a read returned, with the lines folded away", async () => {
    const root = await show(
      result("read_file", "1\tfn main() {}", {
        kind: "read",
        path: "src/main.rs",
        first_line: 1,
        last_line: 40,
        total_lines: 120,
      }),
    );
    expect(card(root).dataset["kind"]).toBe("read");
    expect(text(root, "[data-testid=tool-summary]")).toBe("Read src/main.rs lines 1–40 of 120");
    expect(root.querySelector("[data-testid=tool-output]")?.hasAttribute("open")).toBe(false);
    expect(text(root, "[data-testid=tool-output] pre")).toBe("1\tfn main() {}");
    // The card is still the stored message it shows, for those who count messages.
    const message = root.querySelector("[data-testid=message]");
    expect(message?.getAttribute("data-role")).toBe("tool");
    expect(message?.contains(card(root))).toBe(true);
  });

  it("says so when the file read was empty, or its length is unknown", () => {
    const read = { kind: "read", path: "a.txt", first_line: 0, last_line: 0 } as const;
    expect(toolSummary({ ...read, total_lines: 0 })).toBe("Read a.txt (empty)");
    expect(toolSummary({ ...read, first_line: 3, last_line: 9, total_lines: null })).toBe(
      "Read a.txt lines 3–9",
    );
  });

  it("counts the files a listing found", async () => {
    const root = await show(
      result("list_files", "a.rs\nb.rs", { kind: "list", count: 2, truncated: false }),
    );
    expect(text(root, "[data-testid=tool-summary]")).toBe("Listed 2 files");
    expect(toolSummary({ kind: "list", count: 1, truncated: true })).toBe(
      "Listed 1 file (more not listed)",
    );
  });

  it("counts a search's hits and files, with the hit lines folded away", async () => {
    const hits = "src/a.rs:3: let x = 1;\nsrc/b.rs:9: let x = 2;";
    const root = await show(
      result("search", hits, { kind: "search", hits: 2, files: 2, truncated: false }),
    );
    expect(text(root, "[data-testid=tool-summary]")).toBe("2 hits in 2 files");
    const output = root.querySelector("[data-testid=tool-output]");
    expect(output?.hasAttribute("open")).toBe(false);
    expect(text(output!, "pre")).toBe(hits);
    expect(toolSummary({ kind: "search", hits: 1, files: 1, truncated: true })).toBe(
      "1 hit in 1 file (stopped at the cap)",
    );
  });

  it("shows a change's path, whether it created or edited the file, and its diff highlighted", async () => {
    const diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\n";
    const root = await show(
      result("edit_file", "edited src/a.rs", {
        kind: "change",
        path: "src/a.rs",
        created: false,
        diff,
      }),
    );
    expect(text(root, "[data-testid=tool-summary]")).toBe("Edited src/a.rs");
    const block = root.querySelector("[data-testid=tool-diff] pre");
    expect(block?.getAttribute("data-highlighted")).toBe("diff");
    expect(block?.textContent).toBe(diff);
    expect(text(block!, ".hljs-addition")).toBe("+new");
    expect(text(block!, ".hljs-deletion")).toBe("-old");
    expect(toolSummary({ kind: "change", path: "notes/new.md", created: true, diff: "" })).toBe(
      "Created notes/new.md",
    );
  });

  it("shows a command, its exit code, its time and its output folded away", async () => {
    const root = await show(result("run_command", "running 3 tests\nok", COMMAND));
    expect(text(root, "[data-testid=tool-command] code")).toBe(COMMAND.command);
    const exit = root.querySelector("[data-testid=tool-exit]");
    expect(exit?.textContent).toBe("exit 0");
    expect(exit?.classList.contains("tool-exit-ok")).toBe(true);
    expect(card(root).textContent).toContain("12.4 s");
    expect(card(root).textContent).toContain("2.0 KB of output");
    expect(root.querySelector("[data-testid=tool-output]")?.hasAttribute("open")).toBe(false);
    expect(text(root, "[data-testid=tool-output] pre")).toBe("running 3 tests\nok");
    expect(root.querySelector("[data-testid=tool-output-file]")).toBeNull();
  });

  it("says where a command ran: in the sandbox, with the network, or outside it", async () => {
    const root = await show(result("run_command", "ok", COMMAND));
    expect(text(root, "[data-testid=tool-summary]")).toBe("Ran a command in the sandbox");
    const place = root.querySelector("[data-testid=tool-place]");
    expect(place?.getAttribute("data-place")).toBe("sandbox");
    expect(place?.textContent).toBe("in the sandbox");
    expect(toolSummary({ ...COMMAND, place: { kind: "sandbox", network: true } })).toBe(
      "Ran a command in the sandbox, with the network",
    );
    expect(toolSummary({ ...COMMAND, place: { kind: "outside" } })).toBe(
      "Ran a command outside the sandbox",
    );
    // A result stored before there was a sandbox says nothing of it.
    document.body.replaceChildren();
    const old = await show(result("run_command", "ok", { ...COMMAND, place: null }));
    expect(text(old, "[data-testid=tool-summary]")).toBe("Ran a command");
    expect(old.querySelector("[data-testid=tool-place]")).toBeNull();
  });

  it("shows a failed command in red, a command ended without a code by its ending, and where the whole output is", async () => {
    const failed = await show(result("run_command", "error", { ...COMMAND, exit_code: 101 }));
    const exit = failed.querySelector("[data-testid=tool-exit]");
    expect(exit?.textContent).toBe("exit 101");
    expect(exit?.classList.contains("tool-exit-failed")).toBe(true);

    document.body.replaceChildren();
    const timedOut = await show(
      result("run_command", "…", {
        ...COMMAND,
        exit_code: null,
        ending: "stopped at its 120-second timeout",
        output_file: "/data/logs/f0000000002/command-3.txt",
      }),
    );
    const ending = timedOut.querySelector("[data-testid=tool-exit]");
    expect(ending?.textContent).toBe("stopped at its 120-second timeout");
    expect(ending?.classList.contains("tool-exit-failed")).toBe(true);
    expect(text(timedOut, "[data-testid=tool-output-file] code")).toBe(
      "/data/logs/f0000000002/command-3.txt",
    );
  });

  it("shows a failed call's error in plain sight", async () => {
    const root = await show(
      result(
        "edit_file",
        "the text to replace occurs 2 times in src/a.rs; give more context",
        { kind: "change", path: "src/a.rs", created: false, diff: "" },
        true,
      ),
    );
    expect(card(root).classList.contains("tool-error")).toBe(true);
    expect(card(root).dataset["error"]).toBe("true");
    expect(text(root, "[data-testid=tool-error]")).toContain("occurs 2 times");
    expect(root.querySelector("[data-testid=tool-diff]")).toBeNull();
  });

  it("keeps the compact look for a result without detail", async () => {
    const root = await show(result("push_frame", "pushed f0000000003", null));
    expect(root.querySelector("[data-testid=tool-card]")).toBeNull();
    const message = root.querySelector("details[data-testid=message]");
    expect(message?.classList.contains("tool-result")).toBe(true);
    expect(message?.textContent).toContain("pushed f0000000003");
  });

  it("says durations as people read them", () => {
    expect(formatDuration(340)).toBe("340 ms");
    expect(formatDuration(1500)).toBe("1.5 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
  });
});

describe("a tool call and a result that does not name its tool", () => {
  /** An assistant message with one call of `name` with `args`, as an imported transcript has it. */
  function call(name: string, args: Value): Message {
    return {
      ...result(name, "", null),
      id: 6,
      role: "assistant",
      tool_calls: [{ id: "c1", name, arguments: args }],
      tool_result: null,
      model: "claude-opus-4-6",
    };
  }

  it("names what a call is about: a path first, then a command, a pattern or a query", () => {
    expect(callSubject({ old_string: "a", file_path: "src/a.rs", command: "ls" })).toBe("src/a.rs");
    expect(callSubject({ description: "Run tests", command: "cargo test\n--all" })).toBe(
      "cargo test",
    );
    expect(callSubject({ pattern: "fn main", glob: "*.rs" })).toBe("fn main");
    // Texts only, and none that is blank; arguments that are not an object name nothing.
    expect(callSubject({ path: 3, query: "  " })).toBeNull();
    expect(callSubject(["src/a.rs"])).toBeNull();
    expect(callSubject(null)).toBeNull();
    expect(callSubject({ path: "x".repeat(200) })?.length).toBe(80);
  });

  it("shows a call's subject after its name", async () => {
    const root = await show(call("Read", { file_path: "/repo/src/main.rs", limit: 40 }));
    const summary = root.querySelector("[data-testid=tool-call] summary");
    expect(summary?.textContent).toContain("Read");
    expect(text(root, ".tool-subject")).toBe(" /repo/src/main.rs");
  });

  it("names a result by its call when the result does not name its tool", async () => {
    const stored = { ...result("unused", "1→fn main() {}", null) };
    stored.tool_result = { tool_call_id: "c1", is_error: false };
    expect(text(await show(stored), "summary strong")).toBe("tool");
    document.body.replaceChildren();
    const names = callNames([call("Read", { file_path: "src/main.rs" }), stored]);
    expect(names.get("c1")).toBe("Read");
    expect(text(await show(stored, names.get("c1")), "summary strong")).toBe("Read");
    // A result that names its tool keeps its own name.
    document.body.replaceChildren();
    expect(text(await show(result("read_file", "x", null), "Read"), "summary strong")).toBe(
      "read_file",
    );
  });
});
