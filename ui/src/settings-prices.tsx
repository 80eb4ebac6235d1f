// The settings dialog's prices: what each model's calls cost, in dollars per million tokens, used
// to show what frames cost. The built-in prices (list prices, each dated) are shown with the
// person's own beside them; changing a built-in price saves it as the person's, which replaces
// it ("Reset" goes back to the built-in one), and "Add a price" prices another model (a local one,
// say). Amounts are typed in dollars and sent as whole micro-dollars, the backend's unit; the
// backend checks them again when the settings are saved. The one-hour cache write may be left
// empty, which prices it as the cache write (as the backend does with a price that has none).

import { useState } from "preact/hooks";

import type {
  ModelPrice_Serialize as ModelPrice,
  Settings_Serialize as Settings,
} from "./bindings";
import { dollarsToMicros, microsToDollars } from "./cost-text";

/** The rates a person edits, in the order of the table's columns. */
const RATES = [
  { field: "input", label: "Input" },
  { field: "output", label: "Output" },
  { field: "cache_read", label: "Cache read" },
  { field: "cache_write", label: "Cache write" },
  { field: "cache_write_long", label: "Cache write (1\u00a0h)" },
] as const;

type Rate = (typeof RATES)[number]["field"];

/**
 * What `text`, typed for `rate`, sets it to: whole micro-dollars, or null for a one-hour cache
 * write left empty (priced as the cache write); undefined when it is not an amount.
 */
function typedRate(rate: Rate, text: string): number | null | undefined {
  if (rate === "cache_write_long" && text.trim() === "") return null;
  return dollarsToMicros(text) ?? undefined;
}

/** A rate as the person sees it in its field: dollars, or nothing for an unset one. */
function rateText(micros: number | null): string {
  return micros === null ? "" : microsToDollars(micros);
}

/** One row of the table: the price in use for a model, and where it comes from. */
export interface PriceRow {
  /** Stable while the row is edited: the model for a built-in price, else its place in the list. */
  key: string;
  price: ModelPrice;
  /** The built-in price of the model, when Flame has one. */
  builtIn: ModelPrice | null;
  /** The row's place in the settings' own prices, when it is the person's. */
  yours: number | null;
}

/** The person's prices first (those over no built-in one), then every built-in model's. */
export function priceRows(
  builtIn: readonly ModelPrice[],
  yours: readonly ModelPrice[],
): PriceRow[] {
  const builtInNames = new Set(builtIn.map((p) => p.model));
  const own: PriceRow[] = yours.flatMap((price, i) =>
    builtInNames.has(price.model) ? [] : [{ key: `yours-${i}`, price, builtIn: null, yours: i }],
  );
  const sorted = [...builtIn].sort((a, b) => a.model.localeCompare(b.model));
  const known = sorted.map((b): PriceRow => {
    const i = yours.findIndex((p) => p.model === b.model);
    const over = yours[i];
    return over === undefined
      ? { key: `built-in-${b.model}`, price: b, builtIn: b, yours: null }
      : { key: `built-in-${b.model}`, price: over, builtIn: b, yours: i };
  });
  return [...own, ...known];
}

/** Where `row`'s price is among the person's now: a built-in model's by its name (it may have
 * become the person's since the row was drawn), another by its place. */
function placeOf(yours: readonly ModelPrice[], row: PriceRow): number {
  if (row.builtIn === null) return row.yours ?? -1;
  return yours.findIndex((p) => p.model === row.builtIn?.model);
}

/** The person's prices with `row` changed: a built-in row becomes the person's own. */
export function editPrice(
  yours: readonly ModelPrice[],
  row: PriceRow,
  change: Partial<ModelPrice>,
): ModelPrice[] {
  const at = placeOf(yours, row);
  if (at < 0) return [...yours, { ...row.price, ...change }];
  return yours.map((p, i) => (i === at ? { ...p, ...change } : p));
}

/** The person's prices without `row`'s (a built-in model goes back to its built-in price). */
export function removePrice(yours: readonly ModelPrice[], row: PriceRow): ModelPrice[] {
  const at = placeOf(yours, row);
  return yours.filter((_, i) => i !== at);
}

/** A new price the person fills in. */
export const NEW_PRICE: ModelPrice = {
  model: "",
  input: 0,
  output: 0,
  cache_read: 0,
  cache_write: 0,
  cache_write_long: null,
  as_of: "",
};

export function PricesSection({
  settings,
  onChange,
}: {
  settings: Settings;
  /** Given each edit, to apply to the person's prices as they are then (edits may come
   * faster than renders). */
  onChange: (edit: (prices: ModelPrice[]) => ModelPrice[]) => void;
}) {
  const yours = settings.prices ?? [];
  const builtIn = settings.built_in_prices ?? [];
  const rows = priceRows(builtIn, yours);
  // What the person is typing in each amount, kept as typed ("3." is on its way to "3.5").
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [open, setOpen] = useState(false);

  const setRate = (row: PriceRow, rate: Rate, text: string) => {
    setDrafts((d) => ({ ...d, [`${row.key}/${rate}`]: text }));
    const micros = typedRate(rate, text);
    if (micros !== undefined) onChange((prices) => editPrice(prices, row, { [rate]: micros }));
  };

  return (
    <fieldset class="prices" data-testid="settings-prices">
      <legend>Prices</legend>
      <p class="muted">
        What each model's calls cost, in dollars per million tokens, to show what frames cost. The
        built-in prices are the providers' list prices on the date shown; change one to use your
        own, or add a model Flame has no price for. Tokens of a model with no price are shown with
        the price unknown. A one-hour cache write left empty costs what a cache write does.
      </p>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          {rows.length} {rows.length === 1 ? "price" : "prices"}, {yours.length} of them yours
        </summary>
        <table class="price-table">
          <thead>
            <tr>
              <th>Model</th>
              {RATES.map((r) => (
                <th key={r.field} class="number">
                  {r.label}
                </th>
              ))}
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const name = row.price.model || "the new model";
              return (
                <tr
                  key={row.key}
                  data-testid="price-row"
                  data-model={row.price.model}
                  data-source={row.yours === null ? "built-in" : "yours"}
                >
                  <td class="price-model">
                    {row.builtIn === null ? (
                      <input
                        name="price_model"
                        aria-label="Model"
                        value={row.price.model}
                        placeholder="model name"
                        onInput={(e) =>
                          onChange((prices) =>
                            editPrice(prices, row, { model: e.currentTarget.value }),
                          )
                        }
                      />
                    ) : (
                      <code>{row.price.model}</code>
                    )}
                    {/* A built-in price's date is a fact; the person's own says when they read it. */}
                    {row.yours === null ? (
                      <span class="price-as-of muted">as of {row.price.as_of}</span>
                    ) : (
                      <label class="price-as-of muted">
                        as of{" "}
                        <input
                          name="price_as_of"
                          aria-label={`Price of ${name} as of`}
                          value={row.price.as_of}
                          placeholder="2026-11"
                          onInput={(e) =>
                            onChange((prices) =>
                              editPrice(prices, row, { as_of: e.currentTarget.value }),
                            )
                          }
                        />
                      </label>
                    )}
                  </td>
                  {RATES.map((r) => {
                    const draft = drafts[`${row.key}/${r.field}`];
                    const text = draft ?? rateText(row.price[r.field]);
                    const long = r.field === "cache_write_long";
                    return (
                      <td key={r.field} class="number">
                        <input
                          name={`price_${r.field}`}
                          inputMode="decimal"
                          aria-label={`${r.label}, dollars per million tokens, for ${name}`}
                          aria-invalid={typedRate(r.field, text) === undefined}
                          value={text}
                          placeholder={long ? rateText(row.price.cache_write) : undefined}
                          title={long ? "Empty: the same as the cache write" : undefined}
                          onInput={(e) => setRate(row, r.field, e.currentTarget.value)}
                        />
                      </td>
                    );
                  })}
                  <td>
                    {row.yours !== null && (
                      <button
                        type="button"
                        class="price-reset"
                        aria-label={
                          row.builtIn === null
                            ? `Remove the price of ${name}`
                            : `Go back to the built-in price of ${name}`
                        }
                        title={
                          row.builtIn === null
                            ? `Remove the price of ${name}`
                            : `Go back to the built-in price of ${name}`
                        }
                        onClick={() => {
                          setDrafts({});
                          onChange((prices) => removePrice(prices, row));
                        }}
                      >
                        {row.builtIn === null ? "×" : "↺"}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </details>
      <button
        type="button"
        data-testid="add-price"
        onClick={() => {
          setOpen(true);
          onChange((prices) => [...prices, NEW_PRICE]);
        }}
      >
        Add a price
      </button>
    </fieldset>
  );
}
