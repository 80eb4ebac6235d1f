import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "./backend";
import type {
  FollowRead_Serialize as FollowRead,
  SessionEntry_Serialize as SessionEntry,
  SessionList_Serialize as SessionList,
} from "./bindings";
import { SessionsDialog } from "./sessions-dialog";
import { answer, fakeBackend, settle } from "./test-backend";
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

async function open(parts: Partial<Backend>) {
  const host = document.createElement("div");
  root = host;
  document.body.append(host);
  await act(async () => {
    render(
      <SessionsDialog
        backend={fakeBackend(parts)}
        run={(call) => call.then((a) => (a.status === "ok" ? null : a.error))}
        onClose={() => undefined}
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
