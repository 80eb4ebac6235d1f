// The settings' MCP servers, whose tools the agent is offered as `server__tool`: the list (each
// server's name, how it is reached, where it stands now, and whether its calls ask first or run
// without asking), a form to add one (a command with its environment, or an address with its
// headers), and "Add from other agents…", which shows the servers Claude Code, OpenCode, Codex
// and the workspace's .mcp.json were given (`findMcpServers`) for the person to pick. What is
// added, changed or removed is saved with the rest of the settings; the backend checks it then.
// Environment and header values the backend holds arrive as "(set)" and are kept as they are.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "./backend";
import type {
  ApiError,
  Found_Serialize as Found,
  McpApproval,
  McpServerSettings_Serialize as McpServer,
  McpServerView_Serialize as McpServerView,
  McpTransport_Serialize as McpTransport,
  Settings_Serialize as Settings,
} from "./bindings";
import { ErrorLine } from "./error-line";

/** The words of a command line: split at spaces, with '…' and "…" holding spaces. */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let quote: string | null = null;
  let started = false;
  for (const char of line) {
    if (quote !== null) {
      if (char === quote) quote = null;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(word);
      word = "";
      started = false;
    } else {
      word += char;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}

/** `NAME=value` (or `Name: value`) lines as a map; blank lines and lines without it left out. */
export function pairLines(text: string, separator: "=" | ":"): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const at = line.indexOf(separator);
    if (at <= 0) continue;
    pairs[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return pairs;
}

/** How a server is reached, in words. */
export function transportText(transport: McpTransport): string {
  return transport.kind === "stdio"
    ? [transport.command, ...transport.args].join(" ")
    : transport.url;
}

/** Where a server stands, in words. */
export function statusText(view: McpServerView | undefined): string {
  if (view === undefined) return "added: it starts once the settings are saved";
  switch (view.status.kind) {
    case "not_started":
      return "starts when the agent first needs it";
    case "running":
      return view.status.tools === null
        ? "running"
        : `running, ${view.status.tools} ${view.status.tools === 1 ? "tool" : "tools"}`;
    case "failed":
      return view.status.message;
  }
}

export function McpServersSection({
  backend,
  settings,
  tree,
  onChange,
}: {
  backend: Backend;
  settings: Settings;
  /** The current tree, whose workspace's .mcp.json "Add from" reads; null: none. */
  tree: string | null;
  /** Told how the list changes. */
  onChange: (edit: (servers: McpServer[]) => McpServer[]) => void;
}) {
  const servers = settings.mcp_servers ?? [];
  const [views, setViews] = useState<McpServerView[] | ApiError | null>(null);
  const [adding, setAdding] = useState(false);
  const [found, setFound] = useState<Found | ApiError | "looking" | null>(null);

  useEffect(() => {
    let live = true;
    void backend.mcpServers(null).then((answer) => {
      if (live) setViews(answer.status === "ok" ? answer.data : answer.error);
    });
    return () => {
      live = false;
    };
  }, [backend]);

  const view = (name: string) =>
    Array.isArray(views) ? views.find((v) => v.name === name) : undefined;
  const lookElsewhere = async () => {
    setFound("looking");
    const answer = await backend.findMcpServers(tree);
    setFound(answer.status === "ok" ? answer.data : answer.error);
  };

  return (
    <fieldset class="mcp-servers" data-testid="settings-mcp">
      <legend>MCP servers</legend>
      <p class="muted">
        Their tools are offered to the agent as <code>server__tool</code>. Each call asks you first,
        unless you let the server's calls run.
      </p>
      {servers.length === 0 ? (
        <p class="muted" data-testid="mcp-none">
          No MCP servers yet.
        </p>
      ) : (
        <ul class="mcp-server-list" data-testid="mcp-server-list">
          {servers.map((server) => (
            <li key={server.name} data-name={server.name}>
              <div>
                <strong>{server.name}</strong>{" "}
                <span class="muted">
                  {server.transport.kind === "stdio" ? "command" : "address"}{" "}
                  <code>{transportText(server.transport)}</code>
                </span>
              </div>
              <div class="muted" data-testid="mcp-status">
                {statusText(view(server.name))}
              </div>
              <div class="mcp-server-controls">
                <label>
                  Calls{" "}
                  <select
                    name={`mcp_approval_${server.name}`}
                    value={server.approval}
                    onChange={(e) => {
                      const approval = e.currentTarget.value as McpApproval;
                      onChange((list) =>
                        list.map((s) => (s.name === server.name ? { ...s, approval } : s)),
                      );
                    }}
                  >
                    <option value="ask">ask first</option>
                    <option value="allow">run without asking</option>
                  </select>
                </label>
                <button
                  type="button"
                  onClick={() => onChange((list) => list.filter((s) => s.name !== server.name))}
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {views !== null && !Array.isArray(views) && (
        <p class="muted" data-testid="mcp-status-unknown">
          Where the servers stand is not known: {views.message}
        </p>
      )}
      <div class="mcp-actions">
        <button type="button" data-testid="mcp-add" onClick={() => setAdding(true)}>
          Add a server…
        </button>{" "}
        <button type="button" data-testid="mcp-add-from" onClick={() => void lookElsewhere()}>
          Add from other agents…
        </button>
      </div>
      {adding && (
        <AddServerForm
          taken={servers.map((s) => s.name)}
          onAdd={(server) => {
            onChange((list) => [...list, server]);
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      {found === "looking" && <p class="muted">Looking for other agents' MCP servers…</p>}
      {found !== null && found !== "looking" && "code" in found && <ErrorLine error={found} />}
      {found !== null && found !== "looking" && "servers" in found && (
        <FoundServers
          found={found}
          taken={servers.map((s) => s.name)}
          onAdd={(picked) => {
            onChange((list) => [...list, ...picked]);
            setFound(null);
          }}
          onCancel={() => setFound(null)}
        />
      )}
    </fieldset>
  );
}

/** The form that adds one server. */
function AddServerForm({
  taken,
  onAdd,
  onCancel,
}: {
  taken: string[];
  onAdd: (server: McpServer) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"stdio" | "http">("stdio");
  const [line, setLine] = useState("");
  const [pairs, setPairs] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  const add = () => {
    const trimmed = name.trim();
    if (trimmed === "") return setProblem("Give the server a name.");
    if (taken.includes(trimmed)) return setProblem(`A server is named ${trimmed} already.`);
    let transport: McpTransport;
    if (kind === "stdio") {
      const [command, ...args] = commandWords(line);
      if (command === undefined) return setProblem("Give the command that starts the server.");
      transport = { kind: "stdio", command, args, env: pairLines(pairs, "=") };
    } else {
      if (line.trim() === "") return setProblem("Give the server's address.");
      transport = { kind: "http", url: line.trim(), headers: pairLines(pairs, ":") };
    }
    onAdd({ name: trimmed, transport, approval: "ask" });
  };

  return (
    <div class="mcp-add-form" data-testid="mcp-add-form" role="group" aria-label="Add a server">
      <label>
        Name
        <input
          name="mcp_name"
          value={name}
          placeholder="github"
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <div role="radiogroup" aria-label="Reached by">
        <label>
          <input
            type="radio"
            name="mcp_kind"
            checked={kind === "stdio"}
            onChange={() => setKind("stdio")}
          />{" "}
          a command on this computer
        </label>{" "}
        <label>
          <input
            type="radio"
            name="mcp_kind"
            checked={kind === "http"}
            onChange={() => setKind("http")}
          />{" "}
          an address (streamable HTTP)
        </label>
      </div>
      <label>
        {kind === "stdio" ? "Command" : "Address"}
        <input
          name="mcp_line"
          spellcheck={false}
          value={line}
          placeholder={
            kind === "stdio"
              ? "npx -y @modelcontextprotocol/server-filesystem ~/projects"
              : "https://example.com/mcp"
          }
          onInput={(e) => setLine(e.currentTarget.value)}
        />
      </label>
      <label>
        {kind === "stdio" ? "Environment (NAME=value a line)" : "Headers (Name: value a line)"}
        <textarea
          name="mcp_pairs"
          rows={2}
          spellcheck={false}
          value={pairs}
          placeholder={
            kind === "stdio" ? "GITHUB_TOKEN=${GITHUB_TOKEN}" : "Authorization: Bearer ${TOKEN}"
          }
          onInput={(e) => setPairs(e.currentTarget.value)}
        />
      </label>
      <p class="muted">
        <code>{"${NAME}"}</code> is the variable NAME of the environment Flame started in.
      </p>
      {problem !== null && (
        <p class="error-message" role="alert">
          {problem}
        </p>
      )}
      <div class="dialog-buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" data-testid="mcp-add-confirm" onClick={add}>
          Add
        </button>
      </div>
    </div>
  );
}

/** What other agents were given, to pick from. */
function FoundServers({
  found,
  taken,
  onAdd,
  onCancel,
}: {
  found: Found;
  taken: string[];
  onAdd: (picked: McpServer[]) => void;
  onCancel: () => void;
}) {
  const [picked, setPicked] = useState<Set<number>>(new Set());
  const toggle = (i: number) =>
    setPicked((current) => {
      const next = new Set(current);
      if (next.has(i)) next.delete(i);
      else next.add(i);
      return next;
    });
  return (
    <div class="mcp-found" data-testid="mcp-found" role="group" aria-label="Found">
      {found.servers.length === 0 ? (
        <p class="muted">No other agent on this computer was given MCP servers.</p>
      ) : (
        <ul>
          {found.servers.map((server, i) => {
            const listed = taken.includes(server.name);
            return (
              <li key={`${server.file}/${server.name}`} data-name={server.name}>
                <label>
                  <input
                    type="checkbox"
                    name={`mcp_found_${i}`}
                    disabled={listed}
                    checked={picked.has(i)}
                    onChange={() => toggle(i)}
                  />{" "}
                  <strong>{server.name}</strong> <code>{transportText(server.transport)}</code>{" "}
                  <span class="muted">
                    from {server.file}
                    {server.original_name !== null && ` (named ${server.original_name} there)`}
                    {server.note !== null && `; ${server.note}`}
                    {listed && "; listed already"}
                  </span>
                </label>
              </li>
            );
          })}
        </ul>
      )}
      {found.problems.length > 0 && (
        <ul class="muted" data-testid="mcp-found-problems" aria-label="Not usable">
          {found.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
      <div class="dialog-buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          data-testid="mcp-found-add"
          disabled={picked.size === 0}
          onClick={() =>
            onAdd(
              found.servers
                .filter((_, i) => picked.has(i))
                .map((server) => ({
                  name: server.name,
                  transport: server.transport,
                  approval: "ask" as const,
                })),
            )
          }
        >
          Add the picked servers
        </button>
      </div>
    </div>
  );
}
