import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Backend } from "./backend";
import type {
  FollowRead_Serialize as FollowRead,
  Frame_Serialize as Frame,
  GatewayCalled_Serialize as GatewayCalled,
  GatewaySessionView_Serialize as GatewaySessionView,
  GatewaySettings_Serialize as GatewaySettings,
  GatewayStatus_Serialize as GatewayStatus,
  SessionEntry_Serialize as SessionEntry,
  SessionList_Serialize as SessionList,
} from "./bindings";
import { SessionsDialog } from "./sessions-dialog";
import { GATEWAY_OFF, answer, fakeBackend, settle } from "./test-backend";
import { summary } from "./test-costs";

function session(id: string, extra: Partial<SessionEntry> = {}): SessionEntry {
  return {
    id,
    agent: "codex",
    session: id.slice(id.indexOf(":") + 1),
    source: `/home/ada/.codex/sessions/${id}.jsonl`,
    project: "/home/ada/project",
    first_request: "Look at this folder",
    last_activity: 1_795_719_000_000,
    size: 57_000,
    recorded_cost: summary(5_200, "complete", 0),
    flame_cost: { kind: "not_available", reason: "needs the replay priced" },
    followed: false,
    tree: null,
    problem: null,
    synced_at: null,
    ...extra,
  };
}

let root: HTMLElement | null = null;
afterEach(() => {
  if (root === null) return;
  render(null, root);
  root.remove();
  root = null;
});

async function open(parts: Partial<Backend>, onClose: () => void = () => undefined) {
  const host = document.createElement("div");
  root = host;
  document.body.append(host);
  await act(async () => {
    render(
      <SessionsDialog
        backend={fakeBackend(parts)}
        run={(call) => call.then((a) => (a.status === "ok" ? null : a.error))}
        onClose={onClose}
      />,
      host,
    );
    await settle();
  });
  return host;
}

describe("the Sessions view", () => {
  it("lists each session with its cost, and what Flame's would be as not available", async () => {
    const list: SessionList = {
      sessions: [session("codex:a"), session("codex:b", { followed: true, tree: "t0000000001" })],
      followed_agents: [],
      problems: [],
      unlisted: 0,
      gateway: [],
    };
    const host = await open({ sessions: () => answer(list) });
    const items = [...host.querySelectorAll("[data-session-id]")];
    expect(items).toHaveLength(2);
    const [first, second] = items as [Element, Element];
    expect(first.querySelector("[data-testid=recorded-cost]")!.textContent).toBe(
      "recorded $0.0052",
    );
    expect(first.querySelector("[data-testid=flame-cost]")!.textContent).toBe("with Flame n/a");
    expect(first.querySelector("[data-testid=follow-session]")).not.toBeNull();
    expect(second.querySelector("[data-testid=unfollow-session]")).not.toBeNull();
    expect(second.querySelector("[data-testid=open-session]")).not.toBeNull();
  });

  it("follows a session through the backend and reads the list again", async () => {
    let followed = false;
    const asked: string[] = [];
    const host = await open({
      sessions: () =>
        answer({
          sessions: [session("codex:a", { followed, tree: followed ? "t0000000001" : null })],
          followed_agents: [],
          problems: [],
          unlisted: 0,
          gateway: [],
        }),
      followSession: (id) => {
        asked.push(id);
        followed = true;
        return answer({
          id,
          tree: "t0000000001",
          frames: 3,
          changed: 0,
          messages: 9,
          restarted: null,
          problem: null,
          budget_notice: null,
        });
      },
    });
    await act(async () => {
      host.querySelector<HTMLButtonElement>("[data-testid=follow-session]")!.click();
      await settle();
    });
    expect(asked).toEqual(["codex:a"]);
    expect(host.querySelector("[data-session-id='codex:a']")!.getAttribute("data-followed")).toBe(
      "true",
    );
  });

  it("shows what a followed session's last read could not do on its row", async () => {
    const problem = "/home/ada/.codex/sessions/a.jsonl is a folder now, not a session file";
    const host = await open({
      sessions: () =>
        answer({
          sessions: [session("codex:a", { followed: true, tree: "t0000000001", problem })],
          followed_agents: [],
          problems: [],
          unlisted: 0,
          gateway: [],
        }),
    });
    expect(host.querySelector("[data-testid=session-problem]")!.textContent).toBe(problem);
  });

  it("warns on a followed session's row when a read says its tree's budget is spent", async () => {
    let tell: ((read: FollowRead) => void) | null = null;
    const notice = 'the budget of frame f0000000001 "Work" is spent (2,220 of 2,000 tokens)';
    const host = await open({
      sessions: () =>
        answer({
          sessions: [session("codex:a", { followed: true, tree: "t0000000001" })],
          followed_agents: [],
          problems: [],
          unlisted: 0,
          gateway: [],
        }),
      onFollowRead: (listener) => {
        tell = listener;
        return Promise.resolve(() => undefined);
      },
    });
    expect(host.querySelector("[data-testid=session-budget]")).toBeNull();
    await act(async () => {
      tell!({ id: "codex:a", stored: true, problem: null, budget_notice: notice });
      await settle();
    });
    expect(host.querySelector("[data-testid=session-budget]")!.textContent).toBe(
      `Warning: ${notice}`,
    );
  });
});

/** The gateway listening on `port` with `settings`, as the backend answers `setGateway`. */
function listening(settings: GatewaySettings): GatewayStatus {
  const address = `127.0.0.1:${settings.port}`;
  return {
    ...GATEWAY_OFF,
    settings,
    listening: address,
    clients: [
      { agent: "Claude Code", line: `export ANTHROPIC_BASE_URL=http://${address}` },
      { agent: "OpenAI SDKs", line: `export OPENAI_BASE_URL=http://${address}/v1` },
    ],
  };
}

/** A backend whose gateway is as `setGateway` last left it, with every setting it was sent. */
function gatewayBackend(first: GatewayStatus = GATEWAY_OFF) {
  const sent: GatewaySettings[] = [];
  let status = first;
  const parts: Partial<Backend> = {
    sessions: () =>
      answer({ sessions: [], followed_agents: [], problems: [], unlisted: 0, gateway: [] }),
    gatewayStatus: () => answer(status),
    setGateway: (settings) => {
      const full = settings as GatewaySettings;
      sent.push(full);
      status = full.on ? listening(full) : { ...GATEWAY_OFF, settings: full };
      return answer(status);
    },
  };
  return { parts, sent };
}

const gateway = (host: HTMLElement) => host.querySelector<HTMLElement>("[data-testid=gateway]")!;

async function click(host: HTMLElement, css: string) {
  await act(async () => {
    host.querySelector<HTMLElement>(css)!.click();
    await settle();
  });
}

describe("the Sessions view's gateway", () => {
  it("is off, then on at the settings' port: where it listens and each agent's line", async () => {
    const { parts, sent } = gatewayBackend();
    const host = await open(parts);
    expect(gateway(host).getAttribute("data-on")).toBe("false");
    expect(host.querySelector("[data-testid=gateway-off]")).not.toBeNull();
    expect(host.querySelector("[data-testid=gateway-address]")).toBeNull();
    // What each mode does is said beside it.
    expect(
      host.querySelector("[data-testid=gateway-mode-observe]")!.closest("label")!.textContent,
    ).toContain("forwards every request as the agent sent it");
    expect(
      host.querySelector("[data-testid=gateway-mode-context]")!.closest("label")!.textContent,
    ).toContain("sends Flame's context");

    await click(host, "[data-testid=gateway-on]");
    expect(sent).toEqual([{ on: true, port: 8788, mode: "observe" }]);
    expect(gateway(host).getAttribute("data-listening")).toBe("127.0.0.1:8788");
    expect(host.querySelector("[data-testid=gateway-address]")!.textContent).toContain(
      "Listening on http://127.0.0.1:8788 · forwarding to https://api.anthropic.com and https://api.openai.com/v1",
    );
    const lines = [...host.querySelectorAll("[data-testid=gateway-line]")].map(
      (l) => l.textContent,
    );
    expect(lines).toEqual([
      "export ANTHROPIC_BASE_URL=http://127.0.0.1:8788",
      "export OPENAI_BASE_URL=http://127.0.0.1:8788/v1",
    ]);
    expect(host.querySelector("[data-testid=gateway-no-sessions]")).not.toBeNull();
  });

  it("copies an agent's line", async () => {
    const written: string[] = [];
    vi.spyOn(navigator.clipboard, "writeText").mockImplementation((text) => {
      written.push(text);
      return Promise.resolve();
    });
    const { parts } = gatewayBackend(listening({ on: true, port: 8788, mode: "observe" }));
    const host = await open(parts);
    const copy = host.querySelector<HTMLButtonElement>("[data-agent='Claude Code'] button")!;
    await act(async () => {
      copy.click();
      await settle();
    });
    expect(written).toEqual(["export ANTHROPIC_BASE_URL=http://127.0.0.1:8788"]);
    expect(copy.textContent).toBe("Copied");
  });

  it("changes the port and the mode through the backend, and refuses a port that is no number", async () => {
    const { parts, sent } = gatewayBackend(listening({ on: true, port: 8788, mode: "observe" }));
    const host = await open(parts);
    const port = host.querySelector<HTMLInputElement>("input[name=gateway-port]")!;
    await act(async () => {
      port.value = "eighty";
      port.dispatchEvent(new Event("input"));
      await settle();
    });
    await click(host, "[data-testid=gateway-port-use]");
    expect(sent).toEqual([]);
    expect(host.querySelector("[role=alert]")!.textContent).toBe(
      "The port is a number from 1 to 65535.",
    );
    await act(async () => {
      port.value = "9123";
      port.dispatchEvent(new Event("input"));
      await settle();
    });
    await click(host, "[data-testid=gateway-port-use]");
    await click(host, "[data-testid=gateway-mode-context]");
    expect(sent).toEqual([
      { on: true, port: 9123, mode: "observe" },
      { on: true, port: 9123, mode: "context" },
    ]);
    expect(gateway(host).getAttribute("data-listening")).toBe("127.0.0.1:9123");
    expect(host.querySelector("[data-testid=gateway-port-use]")).toBeNull();
    expect(host.querySelector("[role=alert]")).toBeNull();
  });

  it("says plainly why it does not listen when the port is taken", async () => {
    const problem = "cannot listen on 127.0.0.1:8788: Address already in use (os error 98)";
    const { parts } = gatewayBackend({
      ...GATEWAY_OFF,
      settings: { on: true, port: 8788, mode: "observe" },
      problem,
    });
    const host = await open(parts);
    expect(host.querySelector("[data-testid=gateway-problem]")!.textContent).toBe(
      `The gateway is not running: ${problem}`,
    );
    expect(host.querySelector("[data-testid=gateway-address]")).toBeNull();
    expect(host.querySelector("[data-testid=gateway-off]")).toBeNull();
  });

  it("lists its sessions with what was billed beside the agent's own requests, read again after each call", async () => {
    const view = (calls: number): GatewaySessionView => ({
      id: "opencode:ses_a",
      agent: "opencode",
      tree: "t0000000007",
      title: "Read notes.txt",
      writes_tree: true,
      savings: {
        calls,
        refused: 1,
        context_calls: 0,
        billed: summary(1_230_000, "complete"),
        client: summary(2_500_000, "complete"),
        rewrites: [],
      },
    });
    let calls = 2;
    let tell: ((called: GatewayCalled) => void) | null = null;
    const focused: string[] = [];
    let closed = false;
    const { parts } = gatewayBackend(listening({ on: true, port: 8788, mode: "observe" }));
    const host = await open(
      {
        ...parts,
        gatewaySessions: () => answer([view(calls)]),
        onGatewayCalled: (listener) => {
          tell = listener;
          return Promise.resolve(() => undefined);
        },
        listTrees: () =>
          answer([
            {
              tree: {
                id: "t0000000007",
                title: "Read notes.txt",
                root: "f0000000070",
                focus: "f0000000071",
                created_at: 0,
                workspace: null,
              },
              root_status: "in_progress",
              frame_count: 2,
              current: false,
            },
          ]),
        focusFrame: (id) => {
          focused.push(id);
          return answer({} as Frame);
        },
      },
      () => (closed = true),
    );
    const row = host.querySelector("[data-gateway-session='opencode:ses_a']")!;
    expect(row.querySelector(".session-agent")!.textContent).toBe("OpenCode");
    expect(row.querySelector(".session-request")!.textContent).toBe("Read notes.txt");
    expect(row.querySelector("[data-testid=gateway-calls]")!.textContent).toBe(
      "2 calls, 1 refused",
    );
    expect(row.querySelector("[data-testid=gateway-billed]")!.textContent).toBe("billed $1.23");
    expect(row.querySelector("[data-testid=gateway-client-cost]")!.textContent).toBe(
      "the agent's own requests: $2.50",
    );
    calls = 3;
    await act(async () => {
      tell!({ session: "opencode:ses_a", status: 200, refused: null });
      await settle();
    });
    expect(host.querySelector("[data-testid=gateway-calls]")!.textContent).toBe(
      "3 calls, 1 refused",
    );
    await click(host, "[data-testid=open-gateway-session]");
    expect(focused).toEqual(["f0000000071"]);
    expect(closed).toBe(true);
  });
});
