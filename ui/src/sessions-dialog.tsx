// The Sessions view: the sessions Claude Code, Codex and OpenCode keep on this computer, as the
// backend lists them (`sessions`), each with its project folder, first request, last activity,
// size, what its recorded calls cost and what Flame's context would have cost on them. A session
// is followed (`followSession`): the backend keeps a tree of it in step with its files, and the
// window opens that tree. An agent can be followed whole: every new session of it. The list is
// read again whenever the backend reads a followed session (`onFollowRead`). Above them, the
// gateway (`gateway-section.tsx`): the sessions that send their model calls through Flame.

import { useEffect, useRef, useState } from "preact/hooks";

import type { Answer, Backend } from "./backend";
import { useCoalescedRead } from "./coalesced-read";
import type {
  FollowRead_Serialize as FollowRead,
  Agent,
  ApiError,
  SessionEntry_Serialize as SessionEntry,
  SessionList_Serialize as SessionList,
  TreeListEntry,
} from "./bindings";
import { describeCost } from "./cost-text";
import { ModalDialog } from "./dialog";
import { ErrorLine } from "./error-line";
import { GatewaySection } from "./gateway-section";

const AGENTS: { agent: Agent; label: string }[] = [
  { agent: "claude-code", label: "Claude Code" },
  { agent: "codex", label: "Codex" },
  { agent: "opencode", label: "OpenCode" },
];

type Load =
  | { state: "loading" }
  | { state: "ready"; list: SessionList }
  | { state: "failed"; error: ApiError };

/** `2026-11-26 19:08` from milliseconds since the epoch, in UTC as the backend writes times. */
function when(at: number | null): string {
  if (at === null) return "—";
  return new Date(at).toISOString().slice(0, 16).replace("T", " ");
}

function size(bytes: number): string {
  return bytes < 1024 * 1024
    ? `${Math.ceil(bytes / 1024)} KB`
    : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** What Flame's context would have cost, or why it is not shown. */
function flameCost(session: SessionEntry): { text: string; title: string } {
  const cost = session.flame_cost;
  return cost.kind === "priced"
    ? { text: describeCost(cost.session), title: "what Flame's context would have cost" }
    : { text: "n/a", title: `Flame's context: ${cost.reason}` };
}

export function SessionsDialog({
  backend,
  run,
  onClose,
}: {
  backend: Backend;
  run: <T>(call: Promise<Answer<T>>) => Promise<ApiError | null>;
  onClose: () => void;
}) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [agent, setAgent] = useState<Agent | "all">("all");
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  // A followed tree's spent budget only warns (Flame does not drive that agent): the newest
  // warning of each session, from the reads since the view opened.
  const [budgetNotices, setBudgetNotices] = useState<ReadonlyMap<string, string>>(new Map());
  const close = useRef<HTMLButtonElement>(null);

  const read = useCoalescedRead(async () => {
    const answer = await backend.sessions(null);
    setLoad(
      answer.status === "ok"
        ? { state: "ready", list: answer.data }
        : { state: "failed", error: answer.error },
    );
  });

  useEffect(() => {
    close.current?.focus();
    void read();
    let live = true;
    let stop: (() => void) | null = null;
    const onRead = (followed: FollowRead) => {
      const notice = followed.budget_notice;
      if (notice !== null) setBudgetNotices((known) => new Map(known).set(followed.id, notice));
      void read();
    };
    void backend.onFollowRead(onRead).then((s) => (live ? (stop = s) : s()));
    return () => {
      live = false;
      stop?.();
    };
  }, [backend]);

  const act = async <T,>(id: string, call: Promise<Answer<T>>) => {
    setBusy(id);
    const answer = await call;
    setBusy(null);
    setError(answer.status === "error" ? answer.error : null);
    void read();
    return answer;
  };

  const open = async (tree: string) => {
    const trees = await backend.listTrees();
    if (trees.status !== "ok") return setError(trees.error);
    const entry = trees.data.find((t: TreeListEntry) => t.tree.id === tree);
    if (entry === undefined) return;
    const refused = await run(backend.focusFrame(entry.tree.focus));
    if (refused === null) onClose();
    else setError(refused);
  };

  const list = load.state === "ready" ? load.list : null;
  const shown = (list?.sessions ?? []).filter((s) => agent === "all" || s.agent === agent);
  return (
    <ModalDialog
      heading="Sessions of other agents"
      testId="sessions"
      className="sessions-dialog"
      onEscape={onClose}
    >
      <h3>Gateway</h3>
      <GatewaySection backend={backend} onOpenTree={(tree) => void open(tree)} />
      <h3>Followed from their files</h3>
      <p class="muted">
        Follow a session and Flame keeps a tree of it in step with what the agent writes. Flame only
        reads the agents' files.
      </p>
      <div class="sessions-filters" role="group" aria-label="Agent">
        <label>
          Agent
          <select
            value={agent}
            data-testid="sessions-agent"
            onChange={(e) => setAgent(e.currentTarget.value as Agent | "all")}
          >
            <option value="all">All</option>
            {AGENTS.map((a) => (
              <option key={a.agent} value={a.agent}>
                {a.label}
              </option>
            ))}
          </select>
        </label>
        {agent !== "all" && list !== null && (
          <label class="checkbox">
            <input
              type="checkbox"
              data-testid="follow-agent"
              checked={list.followed_agents.includes(agent)}
              onChange={(e) =>
                void act(`agent:${agent}`, backend.followAgent(agent, e.currentTarget.checked))
              }
            />
            Follow every new {AGENTS.find((a) => a.agent === agent)?.label} session
          </label>
        )}
      </div>
      <ErrorLine error={error} />
      {load.state === "loading" && <p class="muted">Looking for sessions…</p>}
      {load.state === "failed" && <ErrorLine error={load.error} />}
      {list !== null && shown.length === 0 && (
        <p class="muted" data-testid="sessions-empty">
          No sessions found.
        </p>
      )}
      {shown.length > 0 && (
        <ul class="sessions-list" aria-label="Sessions">
          {shown.map((s) => {
            const flame = flameCost(s);
            return (
              <li key={s.id} class="session" data-session-id={s.id} data-followed={s.followed}>
                <div class="session-line">
                  <span class="session-agent">
                    {AGENTS.find((a) => a.agent === s.agent)?.label}
                  </span>
                  <span class="session-request" title={s.first_request ?? ""}>
                    {s.first_request ?? "(no request yet)"}
                  </span>
                  {s.followed ? (
                    <>
                      {s.tree !== null && (
                        <button
                          type="button"
                          data-testid="open-session"
                          onClick={() => s.tree !== null && void open(s.tree)}
                        >
                          Open
                        </button>
                      )}
                      <button
                        type="button"
                        data-testid="unfollow-session"
                        disabled={busy === s.id}
                        onClick={() => void act(s.id, backend.unfollowSession(s.id))}
                      >
                        Stop following
                      </button>
                    </>
                  ) : (
                    <button
                      type="button"
                      class="primary"
                      data-testid="follow-session"
                      disabled={busy === s.id}
                      onClick={() => void act(s.id, backend.followSession(s.id))}
                    >
                      Follow
                    </button>
                  )}
                </div>
                <div class="session-facts muted">
                  <span title={s.source}>{s.project ?? s.source}</span>
                  <span>{when(s.last_activity)}</span>
                  <span>{size(s.size)}</span>
                  <span data-testid="recorded-cost">
                    recorded {s.recorded_cost === null ? "not read" : describeCost(s.recorded_cost)}
                  </span>
                  <span data-testid="flame-cost" title={flame.title}>
                    with Flame {flame.text}
                  </span>
                </div>
                {s.problem !== null && (
                  <p class="error-message" role="alert" data-testid="session-problem">
                    {s.problem}
                  </p>
                )}
                {budgetNotices.has(s.id) && (
                  <p class="chat-notice" role="status" data-testid="session-budget">
                    Warning: {budgetNotices.get(s.id)}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {list !== null && list.problems.length > 0 && (
        <details>
          <summary>{list.problems.length} could not be read</summary>
          <ul>
            {list.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </details>
      )}
      <div class="dialog-buttons">
        <button type="button" ref={close} onClick={onClose}>
          Close
        </button>
      </div>
    </ModalDialog>
  );
}
