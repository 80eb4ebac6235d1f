import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import { App } from "./app";
import type { Backend } from "./backend";
import type { ApiError, AppInfo } from "./bindings";

const INFO: AppInfo = {
  version: "0.1.0",
  data_dir: "/tmp/flame-home",
  data_dir_source: "flame_home",
  database_path: "/tmp/flame-home/flame.db",
  schema_version: 1,
};

function backendAnswering(answer: AppInfo | ApiError): Backend {
  return {
    appInfo: () =>
      Promise.resolve(
        "code" in answer ? { status: "error", error: answer } : { status: "ok", data: answer },
      ),
  };
}

async function mount(backend: Backend): Promise<HTMLElement> {
  const root = document.createElement("div");
  document.body.append(root);
  await act(async () => {
    render(<App backend={backend} />, root);
    await Promise.resolve();
  });
  return root;
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("App", () => {
  it("shows both panes and the data directory the backend reports", async () => {
    const root = await mount(backendAnswering(INFO));
    expect(root.querySelector("[data-testid=graph-pane]")).not.toBeNull();
    expect(root.querySelector("[data-testid=chat-pane]")).not.toBeNull();
    expect(root.querySelector("[data-testid=data-dir]")?.textContent).toBe("/tmp/flame-home");
    expect(root.textContent).toContain("from FLAME_HOME");
    expect(root.textContent).toContain("schema v1");
  });

  it("says where the default location came from", async () => {
    const root = await mount(backendAnswering({ ...INFO, data_dir_source: "platform" }));
    expect(root.textContent).toContain("default location");
  });

  it("shows the startup error instead of the panes", async () => {
    const root = await mount(
      backendAnswering({
        code: "database_unreadable",
        message: "/x/flame.db is not a Flame database",
      }),
    );
    const alert = root.querySelector("[role=alert]");
    expect(alert?.getAttribute("data-code")).toBe("database_unreadable");
    expect(alert?.textContent).toContain("Flame cannot read its database");
    expect(alert?.textContent).toContain("/x/flame.db is not a Flame database");
    expect(root.querySelector("[data-testid=graph-pane]")).toBeNull();
  });

  it("says it is opening until the backend answers", async () => {
    const root = await mount({ appInfo: () => new Promise(() => undefined) });
    expect(root.querySelector(".status-bar")?.textContent).toContain("Opening");
  });
});
