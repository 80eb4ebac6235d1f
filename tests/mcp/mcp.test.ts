// `flame mcp` as a real MCP client sees it: the official TypeScript SDK starts the server over
// stdio, lists its tools, plans, pushes and pops, reads the status and a log resource, and the
// store (read back with the `flame` command line) has every change, made by the agent.

import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FLAME = process.env["FLAME_CLI"] ?? join(REPO, "target/debug/flame");

interface StatusFrame {
  id: string;
  title: string;
  status: string;
  parent: string | null;
  results: string | null;
}

let home = "";
let client: Client;

function flame(...args: string[]): string {
  return execFileSync(FLAME, ["--home", home, ...args], { encoding: "utf8" });
}

function status(): { focus: string; frames: StatusFrame[] } {
  return JSON.parse(flame("--json", "status")) as { focus: string; frames: StatusFrame[] };
}

function text(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content.map((c) => c.text).join("\n");
}

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "flame-mcp-"));
  flame("tree", "new", "Build the application", "--criteria", "A working app");
  client = new Client({ name: "flame-mcp-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: FLAME, args: ["--home", home, "mcp"] }));
});

afterEach(async () => {
  await client.close();
  await rm(home, { recursive: true, force: true });
});

describe("flame mcp through the official TypeScript SDK", () => {
  it("lists the agent's frame tools and frame_context", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "frame_context",
      "frame_status",
      "invalidate_frame",
      "plan_frames",
      "pop_frame",
      "push_frame",
      "read_frame_log",
      "start_frame",
    ]);
    const pop = tools.find((t) => t.name === "pop_frame");
    expect(pop?.inputSchema.required).toEqual(["status"]);
  });

  it("plans, pushes and pops, and the store has it all, made by the agent", async () => {
    const planned = await client.callTool({
      name: "plan_frames",
      arguments: { frames: [{ title: "Pagination", success_criteria: "Cursor-based" }] },
    });
    expect(planned.isError).toBe(false);
    const pushed = await client.callTool({
      name: "push_frame",
      arguments: { title: "User Authentication", success_criteria: "JWT login" },
    });
    expect(text(pushed)).toContain("You are now working in it");
    const auth = status().focus;
    const popped = await client.callTool({
      name: "pop_frame",
      arguments: {
        status: "completed",
        results: "JWT login with refresh tokens",
        artifacts: ["src/auth.rs"],
      },
    });
    expect(text(popped)).toContain(`Popped ${auth} as completed`);

    const after = status();
    const byTitle = (title: string) => after.frames.find((f) => f.title === title);
    expect(byTitle("Pagination")?.status).toBe("planned");
    expect(byTitle("User Authentication")?.status).toBe("completed");
    expect(byTitle("User Authentication")?.results).toBe("JWT login with refresh tokens");
    expect(after.focus).toBe(byTitle("Build the application")?.id);
    expect(flame("log", auth)).toContain("pushed by agent");

    const tree = JSON.parse(
      text(await client.callTool({ name: "frame_status", arguments: {} })),
    ) as { frames: unknown[] };
    expect(tree.frames).toHaveLength(3);
    const context = JSON.parse(
      text(await client.callTool({ name: "frame_context", arguments: {} })),
    ) as { xml: string };
    expect(context.xml).toContain("JWT login with refresh tokens");
  });

  it("refuses with the command line's messages, as tool errors", async () => {
    const refused = await client.callTool({
      name: "pop_frame",
      arguments: { status: "completed" },
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("needs its results");
    const unknown = await client.callTool({
      name: "start_frame",
      arguments: { id: "fzzzzzzzzzz" },
    });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toBe("no frame fzzzzzzzzzz in this data directory");
  });

  it("serves only its own tree's frames, even after another tree is made", async () => {
    const served = status().focus;
    flame("tree", "new", "Private work", "--criteria", "Not for this client");
    const other = status().focus;
    expect(other).not.toBe(served);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([`flame://log/${served}`]);
    await expect(client.readResource({ uri: `flame://log/${other}` })).rejects.toThrow(
      "not in the served tree",
    );
    for (const [name, id] of [
      ["frame_context", other],
      ["read_frame_log", other],
    ] as const) {
      const refused = await client.callTool({ name, arguments: { id } });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/not in the served tree|in another tree/);
    }
  });

  it("offers each frame's log as a resource", async () => {
    const { resources } = await client.listResources();
    expect(resources).toHaveLength(1);
    const root = status().focus;
    expect(resources[0]?.uri).toBe(`flame://log/${root}`);
    const read = await client.readResource({ uri: `flame://log/${root}` });
    const first = read.contents[0] as { text: string; mimeType: string };
    expect(first.mimeType).toBe("text/markdown");
    expect(first.text).toContain("# Build the application");
  });
});
