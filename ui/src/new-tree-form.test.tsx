import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type { Answer } from "./backend";
import type { ApiError } from "./bindings";
import { NewTreeForm } from "./new-tree-form";
import { answer, settle } from "./test-backend";

afterEach(() => {
  document.body.replaceChildren();
});

type Created = [string, string, string | null];

/** The form, creating with `refusal` (null: accepted) and choosing `chosen` in the folder dialog. */
async function mount(
  refusal: ApiError | null,
  chosen: string | null | ApiError = null,
): Promise<{ root: HTMLElement; created: Created[]; asked: string[] }> {
  const root = document.createElement("div");
  document.body.append(root);
  const created: Created[] = [];
  const asked: string[] = [];
  await act(async () => {
    render(
      <NewTreeForm
        onCreate={(title, criteria, workspace) => {
          created.push([title, criteria, workspace]);
          return Promise.resolve(refusal);
        }}
        onChooseFolder={(title): Promise<Answer<string | null>> => {
          asked.push(title);
          return answer(chosen);
        }}
      />,
      root,
    );
    await settle();
  });
  return { root, created, asked };
}

function field(root: HTMLElement, selector: string): HTMLInputElement | HTMLTextAreaElement {
  const found = root.querySelector<HTMLInputElement | HTMLTextAreaElement>(selector);
  if (found === null) throw new Error(`no ${selector}`);
  return found;
}

async function fill(root: HTMLElement, values: Record<string, string>) {
  await act(async () => {
    for (const [selector, value] of Object.entries(values)) {
      const input = field(root, selector);
      input.value = value;
      input.dispatchEvent(new Event("input"));
    }
    await settle();
  });
}

async function submit(root: HTMLElement) {
  await act(async () => {
    root
      .querySelector("[data-testid=new-tree-form]")
      ?.dispatchEvent(new Event("submit", { cancelable: true }));
    await settle();
  });
}

describe("the new-tree form's workspace folder", () => {
  it("passes the folder typed, and none when the field is left empty", async () => {
    const { root, created } = await mount(null);
    await fill(root, {
      "input[name=title]": "Ship it",
      "textarea[name=criteria]": "Released",
      "[data-testid=new-tree-workspace]": "  /home/ada/proj ",
    });
    await submit(root);
    await fill(root, { "[data-testid=new-tree-workspace]": "" });
    await submit(root);
    expect(created).toEqual([
      ["Ship it", "Released", "/home/ada/proj"],
      ["Ship it", "Released", null],
    ]);
  });

  it("fills the field with the folder chosen in the system's dialog, and keeps it on cancel", async () => {
    const chose = await mount(null, "/home/ada/chosen");
    await act(async () => {
      chose.root.querySelector<HTMLButtonElement>("[data-testid=choose-workspace]")?.click();
      await settle();
    });
    expect(chose.asked).toHaveLength(1);
    expect(field(chose.root, "[data-testid=new-tree-workspace]").value).toBe("/home/ada/chosen");

    document.body.replaceChildren();
    const cancelled = await mount(null, null);
    await fill(cancelled.root, { "[data-testid=new-tree-workspace]": "/typed" });
    await act(async () => {
      cancelled.root.querySelector<HTMLButtonElement>("[data-testid=choose-workspace]")?.click();
      await settle();
    });
    expect(field(cancelled.root, "[data-testid=new-tree-workspace]").value).toBe("/typed");
  });

  it("shows a refused folder in place and loses nothing typed", async () => {
    const refusal: ApiError = {
      code: "invalid",
      message: "the workspace folder /nowhere does not exist",
    };
    const { root } = await mount(refusal);
    await fill(root, {
      "input[name=title]": "Ship it",
      "textarea[name=criteria]": "Released",
      "[data-testid=new-tree-workspace]": "/nowhere",
    });
    await submit(root);
    expect(root.querySelector("[role=alert]")?.textContent).toBe(refusal.message);
    expect(field(root, "input[name=title]").value).toBe("Ship it");
    expect(field(root, "textarea[name=criteria]").value).toBe("Released");
    expect(field(root, "[data-testid=new-tree-workspace]").value).toBe("/nowhere");
  });
});
