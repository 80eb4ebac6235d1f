import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "./backend";
import type { ModelList_Serialize as ModelList, Settings_Serialize as Settings } from "./bindings";
import { SettingsServers, addressLines, serverStatus } from "./settings-servers";
import { answer, fakeBackend, settle } from "./test-backend";

afterEach(() => {
  document.body.replaceChildren();
});

/** What the backend found at the usual ports: llama.cpp on 8080, nothing elsewhere. */
const FOUND: ModelList = {
  models: [],
  default_model: null,
  providers: [],
  local_servers: [
    {
      address: "127.0.0.1:11434",
      kind: null,
      models: 0,
      models_left_out: 0,
      problem: "nothing answers at 127.0.0.1:11434",
    },
    { address: "127.0.0.1:8080", kind: "llama_cpp", models: 1, models_left_out: 0, problem: null },
  ],
};

async function mount(backend: Backend, local_servers?: string[]) {
  const root = document.createElement("div");
  document.body.append(root);
  const edits: string[][] = [];
  const settings = { local_servers } as unknown as Settings;
  await act(async () => {
    render(
      <SettingsServers
        backend={backend}
        settings={settings}
        onChange={(addresses) => edits.push(addresses)}
      />,
      root,
    );
    await settle();
  });
  const box = root.querySelector<HTMLTextAreaElement>("textarea[name=local_servers]");
  if (box === null) throw new Error("no address box");
  return { root, box, edits };
}

describe("the local model servers in the settings", () => {
  it("shows the usual addresses and what answers at each until the person edits them", async () => {
    const { root, box, edits } = await mount(fakeBackend({ listModels: () => answer(FOUND) }));
    expect(box.value).toBe("127.0.0.1:11434\n127.0.0.1:8080");
    const status = [...root.querySelectorAll("[data-testid=local-server-status] li")].map(
      (li) => li.textContent,
    );
    expect(status).toEqual([
      "127.0.0.1:11434 nothing answers at 127.0.0.1:11434",
      "127.0.0.1:8080 llama.cpp, 1 model",
    ]);
    expect(edits).toEqual([]);
    await act(async () => {
      box.value = " 127.0.0.1:8080\n\ngpu-box.lan:11434 ";
      box.dispatchEvent(new Event("input"));
      await settle();
    });
    expect(edits).toEqual([["127.0.0.1:8080", "gpu-box.lan:11434"]]);
    expect(box.value).toBe(" 127.0.0.1:8080\n\ngpu-box.lan:11434 ");
  });

  it("shows the saved addresses, and an empty list as empty", async () => {
    const saved = await mount(fakeBackend({ listModels: () => answer(FOUND) }), ["10.0.0.2:8000"]);
    expect(saved.box.value).toBe("10.0.0.2:8000");
    const none = await mount(fakeBackend({ listModels: () => answer(FOUND) }), []);
    expect(none.box.value).toBe("");
  });

  it("says why the servers could not be looked for", async () => {
    const { root, box } = await mount(fakeBackend({}));
    expect(box.value).toBe("");
    expect(root.querySelector("[data-testid=local-servers-unknown]")?.textContent).toBe(
      "Could not look for local servers: not part of this test",
    );
    expect(root.querySelector("[role=alert]")).toBeNull();
  });

  it("reads the box and the status in words", () => {
    expect(addressLines("a:1\n  \n b:2 \n")).toEqual(["a:1", "b:2"]);
    expect(serverStatus({ ...FOUND.local_servers[1]!, models: 1000, models_left_out: 9000 })).toBe(
      "llama.cpp, 1000 models, 9000 more left out",
    );
  });
});
