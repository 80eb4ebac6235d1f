// The Sessions view's Gateway section: Flame's gateway (DESIGN.md §12), a server on 127.0.0.1
// that an agent points its base URL at, which the window runs while the settings say so. The
// person turns it on or off and picks its port and mode (`setGateway` saves them and restarts
// it); the section shows where it listens, the line to paste for each agent, why it does not
// listen when it should, and the sessions that came through it with what each was billed beside
// what the agent's own requests would have cost. Every figure is the backend's; the list is read
// again whenever the gateway ends a call (`onGatewayCalled`).

import { useEffect, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import { useCoalescedRead } from "./coalesced-read";
import type {
  ApiError,
  GatewayMode,
  GatewaySessionView_Serialize as GatewaySessionView,
  GatewaySettings_Serialize as GatewaySettings,
  GatewayStatus_Serialize as GatewayStatus,
} from "./bindings";
import { CopyButton } from "./copy-button";
import { describeCost } from "./cost-text";
import { ErrorLine } from "./error-line";

/** The modes, each with what it does in a line. */
const MODES: { mode: GatewayMode; label: string; says: string }[] = [
  {
    mode: "observe",
    label: "Observe",
    says: "forwards every request as the agent sent it; budgets are checked and each call's cost recorded.",
  },
  {
    mode: "context",
    label: "Context",
    says: "sends Flame's context for the agent's current frame instead of its whole history; its tools and system prompt go unchanged.",
  },
];

/** The agents as the gateway names them. */
const AGENT_LABELS: Record<string, string> = {
  "claude-code": "Claude Code",
  codex: "Codex",
  opencode: "OpenCode",
  other: "Other client",
};

/** A port the person typed, as the number the settings hold; null for anything else. */
export function portOf(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d{1,5}$/.test(trimmed)) return null;
  const port = Number(trimmed);
  return port <= 65_535 ? port : null;
}

/** What a session's calls came to, in words: calls, refusals, and billed beside the client's. */
function callsText(session: GatewaySessionView): string {
  const s = session.savings;
  if (s === null) return "no call recorded yet";
  const calls = `${s.calls} ${s.calls === 1 ? "call" : "calls"}`;
  return s.refused > 0 ? `${calls}, ${s.refused} refused` : calls;
}

export function GatewaySection({
  backend,
  onOpenTree,
}: {
  backend: Backend;
  /** Opens a session's tree in the window. */
  onOpenTree: (tree: string) => void;
}) {
  const [status, setStatus] = useState<GatewayStatus | null>(null);
  const [sessions, setSessions] = useState<GatewaySessionView[] | null>(null);
  const [port, setPort] = useState("");
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = (next: GatewayStatus) => {
    setStatus(next);
    setPort(String(next.settings.port));
  };

  // The sessions, read again after each call; calls that end while a read runs cost one more.
  const readSessions = useCoalescedRead(async () => {
    const answer = await backend.gatewaySessions();
    if (answer.status === "ok") setSessions(answer.data);
    else setError(answer.error);
  });

  useEffect(() => {
    void backend.gatewayStatus().then((answer) => {
      if (answer.status === "ok") shown(answer.data);
      else setError(answer.error);
    });
    void readSessions();
    let live = true;
    let stop: (() => void) | null = null;
    void backend.onGatewayCalled(() => void readSessions()).then((s) => (live ? (stop = s) : s()));
    return () => {
      live = false;
      stop?.();
    };
  }, [backend]);

  const apply = async (settings: GatewaySettings) => {
    setBusy(true);
    const answer: Answer<GatewayStatus> = await backend.setGateway(settings);
    setBusy(false);
    if (answer.status === "ok") {
      setError(null);
      shown(answer.data);
    } else setError(answer.error);
  };

  if (status === null) {
    return (
      <section class="gateway-section" aria-label="Gateway" data-testid="gateway">
        <ErrorLine error={error} />
      </section>
    );
  }
  const settings = status.settings;
  const typedPort = portOf(port);
  const usePort = () => {
    if (typedPort === null) {
      setError({ code: "invalid", message: "The port is a number from 1 to 65535." });
    } else void apply({ ...settings, port: typedPort });
  };
  return (
    <section
      class="gateway-section"
      aria-label="Gateway"
      data-testid="gateway"
      data-on={settings.on}
      data-listening={status.listening ?? ""}
    >
      <div class="gateway-controls">
        <label class="checkbox">
          <input
            type="checkbox"
            data-testid="gateway-on"
            checked={settings.on}
            disabled={busy}
            onChange={(e) => void apply({ ...settings, on: e.currentTarget.checked })}
          />
          Run the gateway
        </label>
        <label class="gateway-port">
          Port
          <input
            name="gateway-port"
            inputMode="numeric"
            size={6}
            value={port}
            disabled={busy}
            onInput={(e) => setPort(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                usePort();
              }
            }}
          />
        </label>
        {port.trim() !== String(settings.port) && (
          <button type="button" data-testid="gateway-port-use" disabled={busy} onClick={usePort}>
            Use port
          </button>
        )}
      </div>
      <div class="gateway-modes" role="radiogroup" aria-label="Mode">
        {MODES.map((m) => (
          <label key={m.mode} class="gateway-mode">
            <input
              type="radio"
              name="gateway-mode"
              value={m.mode}
              data-testid={`gateway-mode-${m.mode}`}
              checked={settings.mode === m.mode}
              disabled={busy}
              onChange={() => void apply({ ...settings, mode: m.mode })}
            />
            <span>
              <strong>{m.label}</strong> <span class="muted">{m.says}</span>
            </span>
          </label>
        ))}
      </div>
      <ErrorLine error={error} />
      {status.problem !== null && (
        <p class="error-message" role="alert" data-testid="gateway-problem">
          The gateway is not running: {status.problem}
        </p>
      )}
      {status.listening !== null && (
        <>
          <p class="gateway-address" data-testid="gateway-address">
            Listening on <code>http://{status.listening}</code>
            <span class="muted">
              {" "}
              · forwarding to {status.anthropic_upstream} and {status.openai_upstream}
            </span>
          </p>
          <ul class="gateway-clients" aria-label="Point an agent at the gateway">
            {status.clients.map((c) => (
              <li key={c.agent} data-agent={c.agent}>
                <span class="gateway-client-agent">{c.agent}</span>
                <code class="gateway-client-line" data-testid="gateway-line">
                  {c.line}
                </code>
                <CopyButton text={c.line} title={`Copy the line for ${c.agent}`} />
              </li>
            ))}
          </ul>
        </>
      )}
      {!settings.on && (
        <p class="muted" data-testid="gateway-off">
          Off. Agents that take a base URL (Claude Code, Codex, OpenCode) can send their model calls
          through Flame: each session becomes a tree, with budgets and what it cost.
        </p>
      )}
      {settings.on && sessions !== null && sessions.length === 0 && (
        <p class="muted" data-testid="gateway-no-sessions">
          No agent has called it yet.
        </p>
      )}
      {sessions !== null && sessions.length > 0 && (
        <ul class="sessions-list gateway-sessions" aria-label="Sessions through the gateway">
          {sessions.map((s) => (
            <li key={s.id} class="session" data-gateway-session={s.id}>
              <div class="session-line">
                <span class="session-agent">{AGENT_LABELS[s.agent] ?? s.agent}</span>
                <span class="session-request" title={s.title ?? ""}>
                  {s.title ?? "(no request yet)"}
                </span>
                {s.tree !== null && (
                  <button
                    type="button"
                    data-testid="open-gateway-session"
                    onClick={() => s.tree !== null && onOpenTree(s.tree)}
                  >
                    Open
                  </button>
                )}
              </div>
              <div class="session-facts muted">
                <span data-testid="gateway-calls">{callsText(s)}</span>
                {s.savings !== null && (
                  <>
                    <span data-testid="gateway-billed">
                      billed {describeCost(s.savings.billed)}
                    </span>
                    <span data-testid="gateway-client-cost">
                      the agent's own requests: {describeCost(s.savings.client)}
                    </span>
                    {s.savings.context_calls > 0 && (
                      <span>{s.savings.context_calls} with Flame's context</span>
                    )}
                  </>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
