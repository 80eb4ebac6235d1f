// The MCP servers in the context inspector: which of the settings' servers the frame's model is
// offered tools from, and how many, with where each server stands (`mcpServers` for the frame).
// The list a frame is offered is kept from its opening to the next, so a server that has changed
// its tools since shows its new count only after the frame's next opening.

import { useEffect, useState } from "preact/hooks";

import type { Backend } from "../backend";
import type { McpServerView_Serialize as McpServerView } from "../bindings";

/** One server's line: its name, the tools the frame is offered from it, where it stands. */
export function serverLine(view: McpServerView): string {
  const offered =
    view.offered_in_frame === null
      ? "listed at this frame's next call"
      : `${view.offered_in_frame} ${view.offered_in_frame === 1 ? "tool" : "tools"} offered`;
  const calls = view.approval === "allow" ? "calls run without asking" : "calls ask first";
  const status =
    view.status.kind === "failed"
      ? `; ${view.status.message}`
      : view.status.kind === "not_started"
        ? "; not started"
        : "";
  return `${view.name}: ${offered}, ${calls}${status}`;
}

export function McpServersLine({
  backend,
  frame,
  seq,
}: {
  backend: Backend;
  frame: string;
  seq: number;
}) {
  const [views, setViews] = useState<McpServerView[]>([]);
  useEffect(() => {
    let live = true;
    void backend.mcpServers(frame).then((answer) => {
      // A list that cannot be read is shown as none: the settings say why.
      if (live) setViews(answer.status === "ok" ? answer.data : []);
    });
    return () => {
      live = false;
    };
  }, [backend, frame, seq]);
  if (views.length === 0) return null;
  return (
    <div class="inspector-mcp" data-testid="context-mcp">
      <p>MCP servers whose tools this frame's model is offered:</p>
      <ul>
        {views.map((view) => (
          <li key={view.name} data-name={view.name} data-status={view.status.kind}>
            {serverLine(view)}
          </li>
        ))}
      </ul>
    </div>
  );
}
