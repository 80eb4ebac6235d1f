import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Backend } from "./backend";
import type {
  ExportFormat,
  ExportProgress,
  ExportScope,
  ExportSummary,
  TreeOutline_Serialize as TreeOutline,
} from "./bindings";
import { ChatPane } from "./chat/chat-pane";
import { ExportDialog, defaultPath, slugify } from "./export-dialog";
import { answer, fakeBackend, outlineFrame, settle } from "./test-backend";

describe("the suggested file", () => {
  it("is named after the title, in the home folder, with the format's extension", () => {
    expect(slugify("Build the application: v2!")).toBe("build-the-application-v2");
    expect(slugify("Café — Übersicht")).toBe("café-übersicht");
    expect(slugify("???")).toBe("flame-export");
    expect(slugify("x".repeat(80))).toHaveLength(60);
    expect(defaultPath("markdown", "API Routes")).toBe("~/api-routes.md");
    expect(defaultPath("json", "API Routes")).toBe("~/api-routes.json");
    expect(defaultPath("context", "API Routes")).toBe("~/api-routes-context.md");
  });
});

const FRAME = { id: "f0000000002", title: "API Routes" };

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
      <ExportDialog
        backend={fakeBackend(parts)}
        frame={FRAME}
        treeTitle="Build the application"
        onClose={onClose}
      />,
      host,
    );
    await settle();
  });
  const form = host.querySelector<HTMLFormElement>("[data-testid=export-dialog]")!;
  const path = () => form.querySelector<HTMLInputElement>("input[name=path]")!;
  const pick = async (name: string, value: string) =>
    act(async () => {
      form.querySelector<HTMLInputElement>(`input[name=${name}][value=${value}]`)!.click();
      await settle();
    });
  const type = async (text: string) =>
    act(async () => {
      path().value = text;
      path().dispatchEvent(new Event("input"));
      await settle();
    });
  const submit = async () =>
    act(async () => {
      form.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
  return { form, path, pick, type, submit };
}

describe("the export dialog", () => {
  it("exports the frames chosen to the typed path, with progress, then says where", async () => {
    const asked: [string, ExportScope, ExportFormat, string][] = [];
    let report: (p: ExportProgress) => void = () => undefined;
    let finish: () => void = () => undefined;
    const summary: ExportSummary = {
      path: "/home/ada/t.json",
      frames: 1234,
      messages: 5678,
      bytes: 9,
    };
    const { form, path, pick, type, submit } = await open({
      exportFrames: (id, scope, format, to, onProgress) => {
        asked.push([id, scope, format, to]);
        if (to === "/nope/t.json") {
          return answer<ExportSummary>({
            code: "invalid",
            message: "cannot export to /nope/t.json: /nope does not exist",
          });
        }
        report = onProgress;
        return new Promise((resolve) => (finish = () => resolve({ status: "ok", data: summary })));
      },
    });
    expect(path().value).toBe("~/api-routes.md");
    await pick("kind", "json");
    expect(path().value).toBe("~/api-routes.json");
    await pick("scope", "tree");
    expect(path().value, "the tree is named after itself").toBe("~/build-the-application.json");
    await pick("scope", "subtree");

    await type("/nope/t.json");
    await submit();
    expect(form.querySelector("[role=alert]")?.textContent).toBe(
      "cannot export to /nope/t.json: /nope does not exist",
    );
    await pick("kind", "markdown");
    expect(path().value, "a typed path is the person's, kept").toBe("/nope/t.json");

    await pick("kind", "json");
    await type("~/t.json");
    await submit();
    expect(form.querySelector("[data-testid=export-progress]")?.textContent).toBe("Exporting…");
    expect(form.querySelector<HTMLButtonElement>("[data-testid=export-submit]")!.disabled).toBe(
      true,
    );
    await act(async () => {
      report({ frames_done: 617, frames_total: 1234 });
      await settle();
    });
    const bar = form.querySelector<HTMLProgressElement>("[data-testid=export-progress] progress")!;
    expect([bar.value, bar.max]).toEqual([617, 1234]);
    expect(form.querySelector("[data-testid=export-progress]")?.textContent).toBe(
      "Read 617 of 1,234 frames",
    );
    await act(async () => {
      finish();
      await settle();
    });
    expect(asked).toEqual([
      [FRAME.id, "subtree", "json", "/nope/t.json"],
      [FRAME.id, "subtree", "json", "~/t.json"],
    ]);
    expect(form.querySelector("[data-testid=export-result]")?.textContent).toBe(
      "Exported 1,234 frames (5,678 messages) to /home/ada/t.json",
    );
    expect(form.querySelector("[data-testid=export-progress]")).toBeNull();
  });

  it("exports the assembled context of the frame, where scope does not apply", async () => {
    const asked: [string, string][] = [];
    const { form, path, pick, submit } = await open({
      exportContext: (frame, to) => {
        asked.push([frame, to]);
        return answer({
          path: "/home/ada/api-routes-context.md",
          frames: 3,
          messages: 1,
          bytes: 1,
        });
      },
    });
    await pick("kind", "context");
    expect(path().value).toBe("~/api-routes-context.md");
    expect(form.querySelectorAll("fieldset")[1]!.disabled).toBe(true);
    await submit();
    expect(asked).toEqual([[FRAME.id, "~/api-routes-context.md"]]);
    expect(form.querySelector("[data-testid=export-result]")?.textContent).toBe(
      "Exported the context (3 frames described, 1 message) to /home/ada/api-routes-context.md",
    );
  });

  it("takes the path chosen in the system's dialog, and keeps its own when cancelled", async () => {
    const offered: string[] = [];
    let chosen: string | null = "/home/ada/docs/routes.md";
    const { form, path } = await open({
      chooseSavePath: (name) => {
        offered.push(name);
        return answer(chosen);
      },
    });
    const choose = async () =>
      act(async () => {
        form.querySelector<HTMLButtonElement>("[data-testid=choose-path]")!.click();
        await settle();
      });
    await choose();
    expect(path().value).toBe("/home/ada/docs/routes.md");
    chosen = null;
    await choose();
    expect(path().value).toBe("/home/ada/docs/routes.md");
    expect(offered).toEqual(["api-routes.md", "routes.md"]);
  });

  it("closes on Cancel and on Close after the export", async () => {
    let closed = 0;
    const { form, submit } = await open(
      {
        exportFrames: () =>
          answer({ path: "/home/ada/api-routes.md", frames: 1, messages: 0, bytes: 1 }),
      },
      () => closed++,
    );
    await submit();
    expect(form.querySelector("[data-testid=export-result]")?.textContent).toBe(
      "Exported 1 frame (0 messages) to /home/ada/api-routes.md",
    );
    await submit();
    expect(closed).toBe(1);
  });
});

describe("Export… in the chat pane's header", () => {
  it("asks the app for the export dialog of the focused frame", async () => {
    const opened: string[] = [];
    const outline: TreeOutline = {
      tree: {
        id: "t0000000001",
        title: "Build",
        root: FRAME.id,
        focus: FRAME.id,
        created_at: 0,
        workspace: null,
      },
      frames: [outlineFrame(FRAME.id, null, { title: FRAME.title, started_at: 0 })],
      seq: 1,
    };
    const host = document.createElement("div");
    root = host;
    document.body.append(host);
    await act(async () => {
      render(
        <ChatPane
          backend={fakeBackend({})}
          outline={outline}
          frame={outline.frames[0]!}
          run={() => Promise.resolve(null)}
          onFocus={() => undefined}
          models={{
            loaded: true,
            models: [],
            groups: [],
            chosen: null,
            error: null,
            choose: () => undefined,
            update: () => undefined,
            refresh: () => undefined,
          }}
          onOpenSettings={() => undefined}
          onOpenDialog={(kind) => opened.push(kind)}
        />,
        host,
      );
      await settle();
    });
    await act(async () => {
      host.querySelector<HTMLButtonElement>("[data-testid=export-button]")!.click();
      await settle();
    });
    expect(opened).toEqual(["export"]);
  });
});
