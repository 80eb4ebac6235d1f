import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";

import type {
  ModelPrice_Serialize as ModelPrice,
  Settings_Deserialize,
  Settings_Serialize as Settings,
} from "./bindings";
import { SettingsDialog } from "./settings-dialog";
import { editPrice, priceRows, removePrice } from "./settings-prices";
import { DEFAULT_APPROVAL, GATEWAY_OFF, answer, fakeBackend, settle } from "./test-backend";

/** A price as Anthropic's are built in: cache writes for an hour at twice the input price. */
function price(model: string, input: number, asOf = "2026-11"): ModelPrice {
  return {
    model,
    input,
    output: 5 * input,
    cache_read: input / 10,
    cache_write: (input * 5) / 4,
    cache_write_long: 2 * input,
    as_of: asOf,
  };
}

const SONNET = price("claude-sonnet-4-5", 3_000_000);
const HAIKU = price("claude-haiku-4-5", 1_000_000);

describe("the price table", () => {
  it("lists the person's own prices, then every built-in one with the person's over it", () => {
    const mine = price("claude-sonnet-4-5", 2_000_000, "2027-01");
    const local = price("llama3.1:8b", 100_000);
    const rows = priceRows([SONNET, HAIKU], [mine, local]);
    expect(rows.map((r) => [r.price.model, r.price.input, r.yours, r.builtIn !== null])).toEqual([
      ["llama3.1:8b", 100_000, 1, false],
      ["claude-haiku-4-5", 1_000_000, null, true],
      ["claude-sonnet-4-5", 2_000_000, 0, true],
    ]);
  });

  it("makes a changed built-in price the person's, and resets it by removing that", () => {
    const [haiku] = priceRows([HAIKU], []);
    const changed = editPrice([], haiku!, { output: 6_000_000 });
    expect(changed).toEqual([{ ...HAIKU, output: 6_000_000 }]);
    const [over] = priceRows([HAIKU], changed);
    expect(editPrice(changed, over!, { output: 7_000_000 })).toEqual([
      { ...HAIKU, output: 7_000_000 },
    ]);
    expect(removePrice(changed, over!)).toEqual([]);
  });
});

const SAVED: Settings = {
  default_model: "claude-sonnet-4-5",
  autonomy: "auto",
  approval: DEFAULT_APPROVAL,
  turn_budget: { micro_usd: 10_000_000, tokens: null, tool_calls: 250 },
  keep_tool_results: 4,
  project_instructions: true,
  checkpoint_cap_mb: 2048,
  gateway: GATEWAY_OFF.settings,
  built_in_prices: [SONNET, HAIKU],
  anthropic: { base_url: null, api_key: null },
  openai: { base_url: null, api_key: null },
  models: [],
};

afterEach(() => {
  document.body.replaceChildren();
});

function type(input: Element | null | undefined, value: string) {
  if (!(input instanceof HTMLInputElement)) throw new Error("no such field");
  input.value = value;
  input.dispatchEvent(new Event("input"));
}

describe("the prices in the settings dialog", () => {
  it("shows the built-in prices, and saves a changed one and a new one as the person's", async () => {
    const sent: Settings_Deserialize[] = [];
    const root = document.createElement("div");
    document.body.append(root);
    await act(async () => {
      render(
        <SettingsDialog
          backend={fakeBackend({
            getSettings: () => answer(SAVED),
            saveSettings: (settings) => {
              sent.push(settings);
              return answer(SAVED);
            },
          })}
          onClose={() => undefined}
        />,
        root,
      );
      await settle();
    });
    await act(settle);
    const row = (model: string) =>
      root.querySelector(`[data-testid=price-row][data-model="${model}"]`);
    expect(row("claude-sonnet-4-5")?.getAttribute("data-source")).toBe("built-in");
    const input = (model: string, field: string) =>
      row(model)?.querySelector(`input[name=price_${field}]`);
    expect((input("claude-sonnet-4-5", "input") as HTMLInputElement).value).toBe("3");
    expect((input("claude-sonnet-4-5", "cache_read") as HTMLInputElement).value).toBe("0.3");
    expect((input("claude-sonnet-4-5", "cache_write_long") as HTMLInputElement).value).toBe("6");

    // Half typed, an amount stays as typed; a finished one is the person's price.
    await act(async () => {
      type(input("claude-haiku-4-5", "output"), "4.");
      await settle();
    });
    expect((input("claude-haiku-4-5", "output") as HTMLInputElement).value).toBe("4.");
    await act(async () => {
      type(input("claude-haiku-4-5", "output"), "4.5");
      type(input("claude-haiku-4-5", "cache_write"), "abc");
      await settle();
    });
    expect(row("claude-haiku-4-5")?.getAttribute("data-source")).toBe("yours");
    expect(input("claude-haiku-4-5", "cache_write")?.getAttribute("aria-invalid")).toBe("true");

    await act(async () => {
      root.querySelector<HTMLButtonElement>("[data-testid=add-price]")?.click();
      await settle();
    });
    const added = root.querySelector('[data-testid=price-row][data-model=""]');
    await act(async () => {
      type(added?.querySelector("input[name=price_model]"), "llama3.1:8b");
      await settle();
    });
    await act(async () => {
      type(input("llama3.1:8b", "input"), "0.1");
      type(input("llama3.1:8b", "cache_write"), "0.125");
      type(row("llama3.1:8b")?.querySelector("input[name=price_as_of]"), "2026-11");
      await settle();
    });
    // A one-hour write left empty is priced as the cache write, which the field shows greyed.
    const long = input("llama3.1:8b", "cache_write_long") as HTMLInputElement;
    expect([long.value, long.placeholder]).toEqual(["", "0.125"]);
    await act(async () => {
      type(long, "0.2");
      await settle();
    });
    await act(async () => {
      type(input("claude-sonnet-4-5", "cache_write_long"), "7.5");
      await settle();
    });
    await act(async () => {
      type(input("claude-sonnet-4-5", "cache_write_long"), "");
      await settle();
    });
    expect(input("claude-sonnet-4-5", "cache_write_long")?.getAttribute("aria-invalid")).toBe(
      "false",
    );
    await act(async () => {
      root
        .querySelector("[data-testid=settings-dialog]")
        ?.dispatchEvent(new Event("submit", { cancelable: true }));
      await settle();
    });
    // The one-hour write of a price edited elsewhere is kept; one emptied is sent as null.
    expect(sent.at(-1)?.prices).toEqual([
      { ...HAIKU, output: 4_500_000 },
      {
        model: "llama3.1:8b",
        input: 100_000,
        output: 0,
        cache_read: 0,
        cache_write: 125_000,
        cache_write_long: 200_000,
        as_of: "2026-11",
      },
      { ...SONNET, cache_write_long: null },
    ]);
  });
});
