import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { McpServerView_Serialize as McpServerView } from "../bindings";
import { answer, fakeBackend, settle } from "../test-backend";
import { McpServersLine, serverLine } from "./mcp-servers-line";

afterEach(() => {
  document.body.replaceChildren();
});

const EVERYTHING: McpServerView = {
  name: "everything",
  transport: "stdio",
  summary: "npx -y @modelcontextprotocol/server-everything",
  status: { kind: "running", tools: 13 },
  approval: "ask",
  offered_in_frame: 13,
};

describe("the MCP servers in the context inspector", () => {
  it("says which servers the frame is offered tools from, and how many", async () => {
    const asked: (string | null)[] = [];
    const backend = fakeBackend({
      mcpServers: (frame) => {
        asked.push(frame);
        return answer([
          EVERYTHING,
          {
            ...EVERYTHING,
            name: "broken",
            approval: "allow",
            status: { kind: "failed", message: "the MCP server broken exited (exit code 3)" },
            offered_in_frame: 0,
          },
        ]);
      },
    });
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(<McpServersLine backend={backend} frame="f0000000001" seq={4} />, root);
      await settle();
    });
    await act(async () => {
      await settle();
    });
    expect(asked).toEqual(["f0000000001"]);
    const lines = [...root.querySelectorAll("[data-testid=context-mcp] li")].map(
      (li) => li.textContent,
    );
    expect(lines).toEqual([
      "everything: 13 tools offered, calls ask first",
      "broken: 0 tools offered, calls run without asking; the MCP server broken exited (exit code 3)",
    ]);
  });

  it("shows nothing without servers, and says when a frame has not listed them yet", async () => {
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(<McpServersLine backend={fakeBackend({})} frame="f0000000001" seq={1} />, root);
      await settle();
    });
    expect(root.childElementCount).toBe(0);
    expect(
      serverLine({ ...EVERYTHING, offered_in_frame: null, status: { kind: "not_started" } }),
    ).toBe("everything: listed at this frame's next call, calls ask first; not started");
  });
});
