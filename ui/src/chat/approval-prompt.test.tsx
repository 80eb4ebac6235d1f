import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  Answer_Deserialize as RequestAnswer,
  PlacePreview,
  Preview,
  ToolKind,
  WaitingRequest,
} from "../bindings";
import { frameChange } from "../test-backend";
import {
  ApprovalPrompt,
  IN_SANDBOX,
  IN_SANDBOX_WITH_NETWORK,
  OUTSIDE_SANDBOX,
} from "./approval-prompt";

afterEach(() => {
  document.body.replaceChildren();
});

/** A workspace call of `name` and `kind` waiting with `preview`. */
function workspaceCall(name: string, kind: ToolKind, preview: Preview): WaitingRequest {
  return {
    call: { id: "c1", name, arguments: {} },
    ask: { kind: "workspace", tool_kind: kind, preview },
  };
}

const EDIT = workspaceCall("edit_file", "changing", {
  kind: "change",
  path: "src/lib.rs",
  created: false,
  diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-fn old() {}\n+fn new() {}\n",
  base: "12:00ab",
});

const COMMAND = workspaceCall("run_command", "running", {
  kind: "command",
  command: "rm -rf target && cargo test",
  folder: "/home/ada/proj",
  timeout_seconds: 120,
  place: { kind: "sandbox", network: false },
});

/** `COMMAND` waiting with `place`. */
function commandIn(place: PlacePreview): WaitingRequest {
  return workspaceCall("run_command", "running", {
    kind: "command",
    command: "cargo fetch",
    folder: "/home/ada/proj",
    timeout_seconds: 120,
    place,
  });
}

/** The prompt for `request`, with every answer it sends. */
async function prompt(
  request: WaitingRequest,
): Promise<{ root: HTMLElement; answers: RequestAnswer[] }> {
  const root = document.createElement("div");
  document.body.append(root);
  const answers: RequestAnswer[] = [];
  await act(() =>
    render(<ApprovalPrompt request={request} onAnswer={(a) => answers.push(a)} />, root),
  );
  return { root, answers };
}

const text = (root: ParentNode, selector: string) => root.querySelector(selector)?.textContent;

async function click(root: HTMLElement, testId: string) {
  const button = root.querySelector<HTMLButtonElement>(`[data-testid=${testId}]`);
  if (button === null) throw new Error(`no ${testId}`);
  await act(() => button.click());
}

describe("the approval prompt", () => {
  it("shows the diff of a change, highlighted", async () => {
    const { root } = await prompt(EDIT);
    expect(root.textContent).toContain("edit_file");
    expect(root.textContent).toContain("Edit src/lib.rs");
    const block = root.querySelector("[data-testid=approval-diff] pre");
    expect(block?.getAttribute("data-highlighted")).toBe("diff");
    expect(block?.querySelector(".hljs-addition")?.textContent).toBe("+fn new() {}");
    expect(block?.querySelector(".hljs-deletion")?.textContent).toBe("-fn old() {}");
    expect(root.querySelector("[data-testid=command-place]")).toBeNull();
  });

  it("shows the exact command, its folder and timeout, and that it runs in the sandbox", async () => {
    const { root } = await prompt(COMMAND);
    expect(root.querySelector("[data-testid=approval-command] code")?.textContent).toBe(
      "rm -rf target && cargo test",
    );
    expect(root.textContent).toContain("/home/ada/proj");
    expect(root.textContent).toContain("120 s");
    const place = root.querySelector("[data-testid=command-place]");
    expect(place?.getAttribute("data-place")).toBe("sandbox");
    expect(place?.textContent).toBe(IN_SANDBOX);
    expect(root.querySelector("[data-testid=approval-allow-network]")).toBeNull();
    document.body.replaceChildren();
    const networked = await prompt(commandIn({ kind: "sandbox", network: true }));
    expect(text(networked.root, "[data-testid=command-place]")).toBe(IN_SANDBOX_WITH_NETWORK);
  });

  it("shows a request to leave the sandbox with the model's reason, and offers the network for the tree", async () => {
    const network = await prompt(
      commandIn({ kind: "leave_sandbox", leave: "network", reason: "download the crates" }),
    );
    const place = network.root.querySelector("[data-testid=command-place]");
    expect(place?.getAttribute("data-place")).toBe("leave");
    expect(place?.textContent).toBe(
      "The agent asks for the network: “download the crates”. It would run in the sandbox with the network on.",
    );
    await click(network.root, "approval-allow-network");
    expect(network.answers).toEqual([{ kind: "allow_network" }]);
    document.body.replaceChildren();

    const all = await prompt(commandIn({ kind: "leave_sandbox", leave: "all", reason: "commit" }));
    expect(text(all.root, "[data-testid=command-place]")).toBe(
      `The agent asks to leave the sandbox: “commit”. ${OUTSIDE_SANDBOX}`,
    );
    expect(all.root.querySelector("[data-testid=approval-allow-network]")).toBeNull();
    document.body.replaceChildren();

    const none = await prompt(commandIn({ kind: "no_sandbox", why: "bwrap is not installed" }));
    const warning = none.root.querySelector("[data-testid=command-place]");
    expect(warning?.getAttribute("data-place")).toBe("none");
    expect(warning?.textContent).toBe(
      `Commands cannot run in a sandbox here (bwrap is not installed). ${OUTSIDE_SANDBOX}`,
    );
  });

  it("shows why a call cannot run, and a read in words", async () => {
    const invalid = await prompt(
      workspaceCall("edit_file", "changing", {
        kind: "invalid",
        message: "../secret is outside the workspace",
      }),
    );
    expect(invalid.root.querySelector("[data-testid=approval-invalid]")?.textContent).toBe(
      "../secret is outside the workspace",
    );
    document.body.replaceChildren();
    const reading = await prompt(
      workspaceCall("search", "reading", { kind: "reading", summary: "Search for fn main" }),
    );
    expect(reading.root.querySelector("[data-testid=approval-reading]")?.textContent).toBe(
      "Search for fn main",
    );
  });

  it("sends Allow, Allow all of the kind, and Refuse as their answers", async () => {
    const allow = await prompt(COMMAND);
    await click(allow.root, "approval-allow");
    expect(allow.answers).toEqual([{ kind: "accept" }]);

    const all = await prompt(COMMAND);
    const allowKind = all.root.querySelector("[data-testid=approval-allow-kind]");
    expect(allowKind?.textContent).toBe("Allow all commands in this tree");
    await click(all.root, "approval-allow-kind");
    expect(all.answers).toEqual([{ kind: "accept_kind" }]);

    const refuse = await prompt(COMMAND);
    await click(refuse.root, "approval-refuse");
    expect(refuse.answers).toEqual([{ kind: "refuse", reason: null }]);
  });

  it("allows a change as it was shown: the answer names the file its diff was made from", async () => {
    const allow = await prompt(EDIT);
    await click(allow.root, "approval-allow");
    expect(allow.answers).toEqual([{ kind: "accept", shown: "12:00ab" }]);
    const all = await prompt(EDIT);
    await click(all.root, "approval-allow-kind");
    expect(all.answers).toEqual([{ kind: "accept_kind", shown: "12:00ab" }]);
  });

  it("names each kind in Allow all", async () => {
    const names: (string | null | undefined)[] = [];
    for (const kind of ["reading", "changing", "running"] as const) {
      const { root } = await prompt(workspaceCall("t", kind, { kind: "reading", summary: "s" }));
      names.push(root.querySelector("[data-testid=approval-allow-kind]")?.textContent);
      document.body.replaceChildren();
    }
    expect(names).toEqual([
      "Allow all reads in this tree",
      "Allow all changes in this tree",
      "Allow all commands in this tree",
    ]);
  });

  it("passes the typed reason with a refusal", async () => {
    const { root, answers } = await prompt(EDIT);
    const reason = root.querySelector<HTMLInputElement>("[data-testid=approval-reason]");
    await act(() => {
      reason!.value = "  keep the old name, other crates use it ";
      reason!.dispatchEvent(new Event("input"));
    });
    await click(root, "approval-refuse");
    expect(answers).toEqual([{ kind: "refuse", reason: "keep the old name, other crates use it" }]);
  });

  it("asks about a push or pop as before: its arguments, Accept or Refuse, no Allow all", async () => {
    const { root, answers } = await prompt(
      frameChange({ id: "c2", name: "push_frame", arguments: { title: "Auth" } }),
    );
    expect(root.textContent).toContain("push_frame");
    expect(root.querySelector("pre")?.textContent).toContain('"title": "Auth"');
    expect(root.querySelector("[data-testid=approval-allow-kind]")).toBeNull();
    expect(root.querySelector("button.primary")?.textContent).toBe("Accept");
    await click(root, "approval-allow");
    expect(answers).toEqual([{ kind: "accept" }]);
  });
  it("asks about an MCP call with its server, tool and arguments, and offers no allow-all", async () => {
    const { root, answers } = await prompt({
      call: { id: "c9", name: "everything__get-sum", arguments: { a: 2, b: 3 } },
      ask: { kind: "mcp", server: "everything", tool: "get-sum" },
    });
    expect(root.querySelector("[data-testid=approval]")?.getAttribute("data-ask")).toBe("mcp");
    expect(root.textContent).toContain(
      "The agent asks to call get-sum of the MCP server everything with:",
    );
    expect(root.querySelector("[data-testid=approval-mcp-arguments]")?.textContent).toBe(
      JSON.stringify({ a: 2, b: 3 }, null, 2),
    );
    expect(root.querySelector("[data-testid=approval-allow-kind]")).toBeNull();
    await click(root, "approval-allow");
    expect(answers).toEqual([{ kind: "accept" }]);
  });
});
