import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "./backend";
import type {
  Found_Serialize as Found,
  McpServerSettings_Serialize as McpServer,
  McpServerView_Serialize as McpServerView,
  Settings_Serialize as Settings,
} from "./bindings";
import { McpServersSection, commandWords, pairLines, statusText } from "./settings-mcp";
import { answer, fakeBackend, settle } from "./test-backend";

afterEach(() => {
  document.body.replaceChildren();
});

const DOCS: McpServer = {
  name: "docs",
  transport: { kind: "stdio", command: "docs-server", args: ["--stdio"], env: { TOKEN: "(set)" } },
  approval: "ask",
};

const VIEWS: McpServerView[] = [
  {
    name: "docs",
    transport: "stdio",
    summary: "docs-server --stdio",
    status: { kind: "running", tools: 3 },
    approval: "ask",
    offered_in_frame: null,
  },
];

const FOUND: Found = {
  servers: [
    {
      source: "project",
      file: "/work/.mcp.json",
      name: "fs",
      original_name: null,
      transport: { kind: "stdio", command: "npx", args: ["-y", "server-filesystem", "."], env: {} },
      note: null,
    },
    {
      source: "claude_code",
      file: "/home/ada/.claude.json",
      name: "docs",
      original_name: null,
      transport: { kind: "http", url: "https://docs.example.com/mcp", headers: {} },
      note: null,
    },
  ],
  problems: ["old in /work/.mcp.json: it uses the old SSE transport, which Flame does not speak"],
};

/** The section over `servers`, keeping the list as the person edits it. */
async function mount(backend: Backend, servers: McpServer[]) {
  const root = document.createElement("div");
  document.body.append(root);
  let list = servers;
  const trees: (string | null)[] = [];
  const spied: Backend = {
    ...backend,
    findMcpServers: (tree) => {
      trees.push(tree);
      return backend.findMcpServers(tree);
    },
  };
  const draw = async () =>
    act(async () => {
      render(
        <McpServersSection
          backend={spied}
          settings={{ mcp_servers: list } as unknown as Settings}
          tree="t0000000001"
          onChange={(edit) => {
            list = edit(list);
            void draw();
          }}
        />,
        root,
      );
      await settle();
    });
  await draw();
  const click = async (selector: string) => {
    const button = root.querySelector<HTMLElement>(selector);
    if (button === null) throw new Error(`no ${selector}`);
    await act(async () => {
      button.click();
      await settle();
    });
  };
  const type = async (name: string, value: string) => {
    const field = root.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[name=${name}]`);
    if (field === null) throw new Error(`no ${name}`);
    await act(async () => {
      field.value = value;
      field.dispatchEvent(new Event("input"));
      await settle();
    });
  };
  return { root, list: () => list, trees, click, type };
}

describe("the MCP servers in the settings", () => {
  it("lists each server with how it is reached, where it stands and its approval", async () => {
    const { root, list } = await mount(fakeBackend({ mcpServers: () => answer(VIEWS) }), [DOCS]);
    const item = root.querySelector("[data-testid=mcp-server-list] li[data-name=docs]");
    expect(item?.textContent).toContain("docs-server --stdio");
    expect(item?.querySelector("[data-testid=mcp-status]")?.textContent).toBe("running, 3 tools");
    const select = item?.querySelector<HTMLSelectElement>("select");
    await act(async () => {
      select!.value = "allow";
      select!.dispatchEvent(new Event("change"));
      await settle();
    });
    expect(list()[0]?.approval).toBe("allow");
    expect(list()[0]?.transport).toEqual(DOCS.transport);
  });

  it("adds a server by its command, with its environment, and removes one", async () => {
    const { click, type, list, root } = await mount(fakeBackend({}), [DOCS]);
    await click("[data-testid=mcp-add]");
    await type("mcp_name", "docs");
    await type("mcp_line", "npx -y '@scope/a server' .");
    await click("[data-testid=mcp-add-confirm]");
    expect(root.querySelector("[role=alert]")?.textContent).toBe("A server is named docs already.");
    await type("mcp_name", " github ");
    await type("mcp_pairs", "GITHUB_TOKEN=${GITHUB_TOKEN}\n\nnot a pair");
    await click("[data-testid=mcp-add-confirm]");
    expect(list()).toEqual([
      DOCS,
      {
        name: "github",
        transport: {
          kind: "stdio",
          command: "npx",
          args: ["-y", "@scope/a server", "."],
          env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" },
        },
        approval: "ask",
      },
    ]);
    expect(root.querySelector("[data-testid=mcp-add-form]")).toBeNull();
    expect(root.querySelector("li[data-name=github] [data-testid=mcp-status]")?.textContent).toBe(
      "added: it starts once the settings are saved",
    );
    await click("li[data-name=docs] button");
    expect(list().map((s) => s.name)).toEqual(["github"]);
  });

  it("adds an address with its headers", async () => {
    const { click, type, list, root } = await mount(fakeBackend({}), []);
    expect(root.querySelector("[data-testid=mcp-none]")).not.toBeNull();
    await click("[data-testid=mcp-add]");
    await type("mcp_name", "remote");
    const http = root.querySelectorAll<HTMLInputElement>("[name=mcp_kind]")[1]!;
    await act(async () => {
      http.click();
      await settle();
    });
    await type("mcp_line", "https://example.com/mcp");
    await type("mcp_pairs", "Authorization: Bearer ${TOKEN}");
    await click("[data-testid=mcp-add-confirm]");
    expect(list()).toEqual([
      {
        name: "remote",
        transport: {
          kind: "http",
          url: "https://example.com/mcp",
          headers: { Authorization: "Bearer ${TOKEN}" },
        },
        approval: "ask",
      },
    ]);
  });

  it("shows what other agents were given and adds what the person picks", async () => {
    const { click, list, root, trees } = await mount(
      fakeBackend({ findMcpServers: () => answer(FOUND) }),
      [DOCS],
    );
    await click("[data-testid=mcp-add-from]");
    expect(trees).toEqual(["t0000000001"]);
    const found = root.querySelector("[data-testid=mcp-found]")!;
    expect(found.querySelector("li[data-name=fs]")?.textContent).toContain(
      "npx -y server-filesystem . from /work/.mcp.json",
    );
    const taken = found.querySelector<HTMLInputElement>("li[data-name=docs] input")!;
    expect(taken.disabled).toBe(true);
    expect(found.querySelector("li[data-name=docs]")?.textContent).toContain("listed already");
    expect(root.querySelector("[data-testid=mcp-found-problems]")?.textContent).toContain(
      "old SSE transport",
    );
    expect(root.querySelector<HTMLButtonElement>("[data-testid=mcp-found-add]")?.disabled).toBe(
      true,
    );
    await click("li[data-name=fs] input");
    await click("[data-testid=mcp-found-add]");
    expect(list()).toEqual([
      DOCS,
      { name: "fs", transport: FOUND.servers[0]!.transport, approval: "ask" },
    ]);
    expect(root.querySelector("[data-testid=mcp-found]")).toBeNull();
  });

  it("reads command lines, pairs and statuses", () => {
    expect(commandWords(`  uvx "my tool"  --flag='a b' x `)).toEqual([
      "uvx",
      "my tool",
      "--flag=a b",
      "x",
    ]);
    expect(commandWords("a ''")).toEqual(["a", ""]);
    expect(pairLines("A=1\nB = two=2\n=no\nnone", "=")).toEqual({ A: "1", B: "two=2" });
    expect(statusText({ ...VIEWS[0]!, status: { kind: "failed", message: "it exited" } })).toBe(
      "it exited",
    );
    expect(statusText({ ...VIEWS[0]!, status: { kind: "not_started" } })).toBe(
      "starts when the agent first needs it",
    );
  });
});
