//! What model calls cost: prices per model, and the cost of the usage frames recorded.
//!
//! Money is kept in whole numbers so that adding up thousands of replies does not drift: a price
//! is in **micro-dollars per million tokens** (`3_000_000` is $3.00 per million tokens), so the
//! cost of `t` tokens is `t × price` *pico*-dollars (10⁻¹² US dollars), an exact integer. Sums are
//! kept in pico-dollars and rounded once, half up, to whole micro-dollars for showing
//! ([`CostSummary::micro_usd`]). Prices are list prices for standard requests, in US dollars:
//! batch, priority or "fast" tiers, regional surcharges and long-prompt tiers are not modelled.
//!
//! A frame's cost is the sum over its messages' recorded usage, each priced by the message's own
//! model; a subtree's is its own plus its descendants'. Usage of a model with no known price is
//! kept as tokens and named, so a cost says whether it is complete, partial or unknown
//! ([`Completeness`]).
//!
//! A `Price` has rates for input, output, cache reads, cache writes (Anthropic's five-minute
//! writes; OpenAI bills writes as input) and an hour's cache writes (Anthropic: twice the input).
//! `built_in_prices()` is the dated table of list prices (`as_of`, confirmed from the providers'
//! pages; a model whose price could not be confirmed is left out, not guessed). `PriceTable` is
//! that table with the settings' entries over it, and a dated snapshot name (`-20250929`,
//! `-2024-08-06`, `-latest`) takes its base name's price unless it has its own. `frame_costs` turns
//! a tree's usage rows (frame, model, summed usage) and its parent links into each frame's
//! `FrameCost`: its own, its subtree's (children added before parents) and its own usage by model.
//! `describe()` says how complete a cost is in the words the command line and the Markdown export
//! print. `check_prices` bounds what the settings may hold: a name, no rate above $10,000 per
//! million tokens, at most 1,000 entries. Costs are never stored: they are worked out from the
//! recorded usage at the prices in use when shown, so a changed price changes every cost shown,
//! past work included.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::{FrameId, Usage};

/// Pico-dollars in a micro-dollar: the rounding step from exact sums to shown amounts.
const PICO_PER_MICRO: u128 = 1_000_000;

/// Micro-dollars in a dollar.
pub const MICRO_USD_PER_USD: u64 = 1_000_000;

/// The highest price per million tokens the settings accept, in micro-dollars ($10,000): far
/// above any model's list price, so a slip of the decimal point is caught and no sum overflows.
pub const MAX_PRICE_MICRO_USD: u64 = 10_000 * MICRO_USD_PER_USD;

/// The most prices the settings may list.
pub const MAX_PRICES: usize = 1_000;

/// The longest model name a price may name, in characters.
pub const MAX_PRICE_MODEL_CHARS: usize = 200;

/// The longest "as of" a price may carry, in characters (a date such as `2026-11`).
pub const MAX_AS_OF_CHARS: usize = 32;

/// What the model calls of one model cost, per million tokens, in micro-dollars.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
pub struct Price {
    /// Input not read from the provider's cache.
    pub input: u64,
    pub output: u64,
    /// Input read from the provider's cache.
    pub cache_read: u64,
    /// Input written to the provider's cache (Anthropic's five-minute writes; providers that do
    /// not charge writes separately bill them as input).
    pub cache_write: u64,
    /// Input written to the cache for an hour (Anthropic: twice the input price).
    pub cache_write_long: u64,
}

/// A model's price, with when it was taken from the provider's price list: an entry of the
/// built-in table ([`built_in_prices`]) or of the settings' `prices`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub struct ModelPrice {
    /// The model's name as its provider reports it in replies (`claude-sonnet-4-5`); a dated
    /// snapshot (`claude-sonnet-4-5-20250929`) takes its base name's price unless it has its own.
    pub model: String,
    /// Micro-dollars per million input tokens not read from the cache.
    pub input: u64,
    /// Micro-dollars per million output tokens.
    pub output: u64,
    /// Micro-dollars per million input tokens read from the cache.
    pub cache_read: u64,
    /// Micro-dollars per million input tokens written to the cache (for its short lifetime).
    pub cache_write: u64,
    /// Micro-dollars per million input tokens written to the cache for an hour; `None` prices
    /// them as [`ModelPrice::cache_write`] (a price the settings held before Flame knew of them).
    #[serde(default)]
    pub cache_write_long: Option<u64>,
    /// When the price was read from the provider's list, for example `2026-11`.
    pub as_of: String,
}

impl ModelPrice {
    pub fn price(&self) -> Price {
        Price {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            cache_write_long: self.cache_write_long.unwrap_or(self.cache_write),
        }
    }
}

/// The prices Flame uses: the built-in table with the settings' entries over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceTable {
    by_model: HashMap<String, ModelPrice>,
}

impl Default for PriceTable {
    /// The built-in table alone.
    fn default() -> PriceTable {
        PriceTable::with_overrides(&[])
    }
}

/// Dated snapshots whose price differs from their base name's, and which are therefore not
/// priced by it: `gpt-4o-2024-05-13` was listed above `gpt-4o`, and its own price could not be
/// confirmed from OpenAI's pages.
const NOT_PRICED_BY_BASE: &[&str] = &["gpt-4o-2024-05-13"];

impl PriceTable {
    /// The built-in prices, replaced or added to by `overrides` (a later entry for the same
    /// model wins).
    pub fn with_overrides(overrides: &[ModelPrice]) -> PriceTable {
        let by_model = built_in_prices()
            .into_iter()
            .chain(overrides.iter().cloned())
            .map(|p| (p.model.clone(), p))
            .collect();
        PriceTable { by_model }
    }

    /// The price of `model`: its own entry, else (for a dated snapshot or a `-latest` alias) the
    /// entry of its base name; `None` when Flame knows no price for it.
    pub fn get(&self, model: &str) -> Option<&ModelPrice> {
        if let Some(price) = self.by_model.get(model) {
            return Some(price);
        }
        if NOT_PRICED_BY_BASE.contains(&model) {
            return None;
        }
        base_name(model).and_then(|base| self.by_model.get(base))
    }

    /// Every entry, by model name.
    pub fn entries(&self) -> Vec<&ModelPrice> {
        let mut entries: Vec<&ModelPrice> = self.by_model.values().collect();
        entries.sort_by(|a, b| a.model.cmp(&b.model));
        entries
    }
}

/// `model` without a trailing snapshot date (`-20250929`, `-2024-08-06`) or `-latest`.
fn base_name(model: &str) -> Option<&str> {
    let is_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(base) = model.strip_suffix("-latest") {
        return Some(base);
    }
    let (base, last) = model.rsplit_once('-')?;
    if last.len() == 8 && is_digits(last) {
        return Some(base);
    }
    // `-YYYY-MM-DD`: the last three dash-separated parts are 4, 2 and 2 digits.
    let (rest, day) = (base, last);
    let (rest, month) = rest.rsplit_once('-')?;
    let (rest, year) = rest.rsplit_once('-')?;
    (year.len() == 4 && month.len() == 2 && day.len() == 2)
        .then_some(())
        .filter(|()| is_digits(year) && is_digits(month) && is_digits(day))
        .map(|()| rest)
}

/// Refuses prices no cost could be trusted with: a model without a name, with white space
/// around it, longer than [`MAX_PRICE_MODEL_CHARS`] or listed twice; a rate above
/// [`MAX_PRICE_MICRO_USD`] (rates are whole micro-dollars, so never negative); an "as of" longer
/// than [`MAX_AS_OF_CHARS`]; more than [`MAX_PRICES`] entries. The message names the entry.
pub fn check_prices(prices: &[ModelPrice]) -> Result<(), String> {
    if prices.len() > MAX_PRICES {
        return Err(format!("at most {MAX_PRICES} prices may be listed, not {}", prices.len()));
    }
    let mut seen = BTreeSet::new();
    for (n, p) in prices.iter().enumerate() {
        let name = p.model.trim();
        if name.is_empty() {
            return Err(format!("price {} names no model", n + 1));
        }
        if name != p.model {
            return Err(format!("the priced model {:?} starts or ends with white space", p.model));
        }
        if name.chars().count() > MAX_PRICE_MODEL_CHARS {
            return Err(format!(
                "the priced model name {name:?} is longer than {MAX_PRICE_MODEL_CHARS} characters"
            ));
        }
        if !seen.insert(name) {
            return Err(format!("the model {name} is priced twice"));
        }
        for (what, rate) in [
            ("input", p.input),
            ("output", p.output),
            ("cache read", p.cache_read),
            ("cache write", p.cache_write),
            ("one-hour cache write", p.cache_write_long.unwrap_or_default()),
        ] {
            if rate > MAX_PRICE_MICRO_USD {
                return Err(format!(
                    "the {what} price of {name} ({}) is above {} per million tokens",
                    format_usd(rate),
                    format_usd(MAX_PRICE_MICRO_USD)
                ));
            }
        }
        if p.as_of.chars().count() > MAX_AS_OF_CHARS {
            return Err(format!(
                "the \"as of\" of {name}'s price is longer than {MAX_AS_OF_CHARS} characters"
            ));
        }
    }
    Ok(())
}

/// What `usage` costs at `price`, in pico-dollars: exact, with no rounding.
pub fn cost_picodollars(usage: &Usage, price: &Price) -> u128 {
    let part = |tokens: u64, rate: u64| u128::from(tokens) * u128::from(rate);
    part(usage.input_tokens, price.input)
        + part(usage.output_tokens, price.output)
        + part(usage.cache_read_tokens, price.cache_read)
        + part(usage.cache_write_tokens, price.cache_write)
        + part(usage.cache_write_long_tokens, price.cache_write_long)
}

/// Pico-dollars rounded half up to whole micro-dollars (saturating at `u64::MAX`).
pub fn round_to_micro_usd(pico: u128) -> u64 {
    u64::try_from((pico + PICO_PER_MICRO / 2) / PICO_PER_MICRO).unwrap_or(u64::MAX)
}

/// What `usage` costs at `price`, rounded half up to whole micro-dollars.
pub fn cost_micro_usd(usage: &Usage, price: &Price) -> u64 {
    round_to_micro_usd(cost_picodollars(usage, price))
}

/// An amount as people read it: `$12.34`, `$0.42`, `$0.0031`; amounts under a hundredth of a
/// cent (but not nothing) as `<$0.0001`.
pub fn format_usd(micro_usd: u64) -> String {
    let cents_digits = |micro: u64, decimals: u32| {
        // Rounded half up to `decimals` places.
        let step = 10u64.pow(6 - decimals);
        let scaled = micro.saturating_add(step / 2) / step;
        let unit = 10u64.pow(decimals);
        format!("${}.{:0width$}", scaled / unit, scaled % unit, width = decimals as usize)
    };
    match micro_usd {
        0 => "$0.00".to_owned(),
        m if m < 100 => "<$0.0001".to_owned(),
        m if m < 10_000 => cents_digits(m, 4),
        m => cents_digits(m, 2),
    }
}

/// The usage a frame recorded with one model, added up over its messages: what the store's
/// aggregate returns, one row per frame and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ModelUsage {
    /// The model the replies name; `None` for replies that recorded usage without a model.
    pub model: Option<String>,
    pub usage: Usage,
}

/// Whether a cost covers all the usage it adds up.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum Completeness {
    /// No usage was recorded: nothing was spent that Flame knows of.
    #[default]
    None,
    /// Every recorded token was priced.
    Complete,
    /// Some tokens were priced; the rest are of models with no known price.
    Partial,
    /// Usage was recorded, but for models with no known price only.
    Unknown,
}

/// A cost and what it covers: the priced amount, every token it adds up, and the tokens of
/// models whose price is unknown (named).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CostSummary {
    /// What the priced tokens cost, in micro-dollars (rounded once, from the exact sum).
    pub micro_usd: u64,
    pub completeness: Completeness,
    /// Every recorded token, priced or not.
    pub usage: Usage,
    /// The tokens of models with no known price.
    pub unpriced_usage: Usage,
    /// The models with no known price, by name; replies without a model are named
    /// [`NO_MODEL`].
    pub unpriced_models: Vec<String>,
}

impl CostSummary {
    /// The cost in words, as the command line and the Markdown export write it: `$0.42`;
    /// `$0.42 + 1,234 tokens of llama3.1:8b at an unknown price`; `price unknown: 1,234 tokens
    /// of llama3.1:8b`; `nothing recorded`.
    pub fn describe(&self) -> String {
        let unpriced = || {
            format!(
                "{} tokens of {}",
                group_thousands(total_tokens(&self.unpriced_usage)),
                self.unpriced_models.join(", ")
            )
        };
        match self.completeness {
            Completeness::None => "nothing recorded".to_owned(),
            Completeness::Complete => format_usd(self.micro_usd),
            Completeness::Partial => {
                format!("{} + {} at an unknown price", format_usd(self.micro_usd), unpriced())
            }
            Completeness::Unknown => format!("price unknown: {}", unpriced()),
        }
    }
}

/// Every token a usage counts: input, output, and cache reads and writes.
pub fn total_tokens(usage: &Usage) -> u64 {
    usage.prompt_tokens().saturating_add(usage.output_tokens)
}

/// `1234567` as `1,234,567`: how Flame writes a count of tokens or bytes for a person or a
/// model to read.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How replies that recorded usage without naming a model are listed among unpriced models.
pub const NO_MODEL: &str = "(no model recorded)";

/// A frame's cost: its own messages', its subtree's (itself and every descendant), and its own
/// usage by model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FrameCost {
    pub own: CostSummary,
    pub subtree: CostSummary,
    /// The frame's own usage by model, each with its cost (`None`: no known price), in model
    /// name order.
    pub models: Vec<ModelCost>,
}

/// One model's share of a frame's own usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ModelCost {
    pub model: Option<String>,
    pub usage: Usage,
    /// Micro-dollars; `None` when Flame knows no price for the model.
    pub micro_usd: Option<u64>,
    /// When the price used was read from the provider's list.
    pub as_of: Option<String>,
}

/// A running total of costs, exact until [`CostTotal::summary`] rounds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CostTotal {
    pico: u128,
    priced_tokens: bool,
    usage: Usage,
    unpriced_usage: Usage,
    unpriced_models: BTreeSet<String>,
}

fn is_empty(usage: &Usage) -> bool {
    *usage == Usage::default()
}

impl CostTotal {
    /// Adds one model's usage at `price` (`None`: unknown). Usage of no tokens adds nothing, so a
    /// reply that reported zeros does not make a cost partial.
    pub fn add(&mut self, usage: &ModelUsage, price: Option<&Price>) {
        if is_empty(&usage.usage) {
            return;
        }
        self.usage.add(&usage.usage);
        match price {
            Some(price) => {
                self.pico = self.pico.saturating_add(cost_picodollars(&usage.usage, price));
                self.priced_tokens = true;
            }
            None => {
                self.unpriced_usage.add(&usage.usage);
                let name = usage.model.as_deref().unwrap_or(NO_MODEL);
                // Checked first: most rows name a model already listed, and cost no allocation.
                if !self.unpriced_models.contains(name) {
                    self.unpriced_models.insert(name.to_owned());
                }
            }
        }
    }

    /// Adds another total (a child's subtree to its parent's).
    pub fn merge(&mut self, other: &CostTotal) {
        self.pico = self.pico.saturating_add(other.pico);
        self.priced_tokens |= other.priced_tokens;
        self.usage.add(&other.usage);
        self.unpriced_usage.add(&other.unpriced_usage);
        for name in &other.unpriced_models {
            if !self.unpriced_models.contains(name) {
                self.unpriced_models.insert(name.clone());
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        is_empty(&self.usage)
    }

    /// The total as shown: rounded to micro-dollars, with what it covers.
    pub fn summary(&self) -> CostSummary {
        let unpriced = !self.unpriced_models.is_empty();
        let completeness = match (self.priced_tokens, unpriced) {
            (false, false) => Completeness::None,
            (true, false) => Completeness::Complete,
            (true, true) => Completeness::Partial,
            (false, true) => Completeness::Unknown,
        };
        CostSummary {
            micro_usd: round_to_micro_usd(self.pico),
            completeness,
            usage: self.usage,
            unpriced_usage: self.unpriced_usage,
            unpriced_models: self.unpriced_models.iter().cloned().collect(),
        }
    }
}

/// Every frame's cost in a tree, from each frame's usage by model (`usage`, as the store adds it
/// up) and each frame's parent (`parents`: every frame of the tree). Frames whose subtree
/// recorded no usage are left out: they cost nothing Flame knows of.
pub fn frame_costs<'a>(
    parents: &[(FrameId, Option<FrameId>)],
    usage: impl IntoIterator<Item = (&'a FrameId, &'a ModelUsage)>,
    prices: &PriceTable,
) -> HashMap<FrameId, FrameCost> {
    let index: HashMap<&FrameId, usize> =
        parents.iter().enumerate().map(|(i, (id, _))| (id, i)).collect();
    let mut totals = vec![CostTotal::default(); parents.len()];
    let mut models: Vec<Vec<ModelCost>> = vec![Vec::new(); parents.len()];
    // A tree names a few models over thousands of rows: each is looked up once.
    let mut price_of: HashMap<&str, Option<&ModelPrice>> = HashMap::new();
    // Rows of one frame tend to come together: its place is looked up once for them.
    let mut last: Option<(&FrameId, usize)> = None;
    for (frame, row) in usage {
        let i = match last {
            Some((at, i)) if at == frame => i,
            _ => {
                let Some(&i) = index.get(frame) else { continue };
                last = Some((frame, i));
                i
            }
        };
        let price =
            row.model.as_deref().and_then(|m| *price_of.entry(m).or_insert_with(|| prices.get(m)));
        totals[i].add(row, price.map(ModelPrice::price).as_ref());
        if !is_empty(&row.usage) {
            models[i].push(ModelCost {
                model: row.model.clone(),
                usage: row.usage,
                micro_usd: price.map(|p| cost_micro_usd(&row.usage, &p.price())),
                as_of: price.map(|p| p.as_of.clone()),
            });
        }
    }
    let mut own: Vec<Option<CostSummary>> =
        totals.iter().map(|t| (!t.is_empty()).then(|| t.summary())).collect();
    // Children before parents: each frame's depth, found by walking up with the depths already
    // known, then frames taken deepest first. A parent missing from the tree ends the walk.
    let parent_of: Vec<Option<usize>> =
        parents.iter().map(|(_, p)| p.as_ref().and_then(|p| index.get(p).copied())).collect();
    let mut depth: Vec<Option<usize>> = vec![None; parents.len()];
    let mut chain = Vec::new();
    for start in 0..parents.len() {
        chain.clear();
        let mut at = Some(start);
        let mut base = 0;
        while let Some(i) = at {
            if let Some(d) = depth[i] {
                base = d + 1;
                break;
            }
            // A cycle (which the store's invariants forbid) is cut once the walk is longer than
            // the tree.
            if chain.len() > parents.len() {
                break;
            }
            chain.push(i);
            at = parent_of[i];
        }
        for (k, &i) in chain.iter().rev().enumerate() {
            depth[i] = Some(base + k);
        }
    }
    let mut order: Vec<usize> = (0..parents.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[i].unwrap_or(0)));
    // Deepest first, a frame's total has every descendant's in it when its turn comes: it is
    // final, and is handed on to its parent.
    let mut costs = HashMap::new();
    for &i in &order {
        let total = std::mem::take(&mut totals[i]);
        if total.is_empty() {
            continue;
        }
        if let Some(p) = parent_of[i].filter(|&p| depth[p] < depth[i]) {
            totals[p].merge(&total);
        }
        let mut by_model = std::mem::take(&mut models[i]);
        by_model.sort_by(|a, b| a.model.cmp(&b.model));
        let own = own[i].take().unwrap_or_default();
        costs.insert(
            parents[i].0.clone(),
            FrameCost { own, subtree: total.summary(), models: by_model },
        );
    }
    costs
}

/// The prices Flame knows without being told, as listed by the providers on the date each
/// carries (standard requests, US dollars; Anthropic's cache writes at the five-minute rate,
/// and its one-hour writes at twice the input price, as its pricing page states for every model).
///
/// Sources: Anthropic's pricing page (`platform.claude.com/docs/en/about-claude/pricing`) and
/// model pages; OpenAI's model pages (`developers.openai.com/api/docs/models/<model>`). OpenAI
/// does not charge cache writes separately, so they are priced as input. Models whose price
/// could not be confirmed are left out rather than guessed, and show their tokens with the price
/// unknown: `claude-sonnet-5-5` (sources disagree on its cache-read price after a change),
/// `claude-haiku-5-5` (priced in two bands by each request's prompt length, which totals per
/// frame cannot apply), `gpt-5`, `o3` and `gpt-4.1-nano` (no provider page found).
pub fn built_in_prices() -> Vec<ModelPrice> {
    // Dollars per million tokens, in micro-dollars: input, output, cache read, cache write.
    const M: u64 = MICRO_USD_PER_USD;
    let table: &[(&str, [u64; 4])] = &[
        // Anthropic.
        ("claude-fable-5-1", [10 * M, 50 * M, 250_000, 12_500_000]),
        ("claude-fable-5", [10 * M, 50 * M, M, 12_500_000]),
        ("claude-opus-5-5", [4 * M, 20 * M, 200_000, 5 * M]),
        ("claude-opus-5", [5 * M, 25 * M, 500_000, 6_250_000]),
        ("claude-opus-4-8", [5 * M, 25 * M, 500_000, 6_250_000]),
        ("claude-opus-4-7", [5 * M, 25 * M, 500_000, 6_250_000]),
        ("claude-opus-4-6", [5 * M, 25 * M, 500_000, 6_250_000]),
        ("claude-opus-4-5", [5 * M, 25 * M, 500_000, 6_250_000]),
        ("claude-opus-4-1", [15 * M, 75 * M, 1_500_000, 18_750_000]),
        ("claude-opus-4-0", [15 * M, 75 * M, 1_500_000, 18_750_000]),
        ("claude-opus-4", [15 * M, 75 * M, 1_500_000, 18_750_000]),
        ("claude-sonnet-5", [2 * M, 10 * M, 200_000, 2_500_000]),
        ("claude-sonnet-4-6", [3 * M, 15 * M, 300_000, 3_750_000]),
        ("claude-sonnet-4-5", [3 * M, 15 * M, 300_000, 3_750_000]),
        ("claude-sonnet-4-0", [3 * M, 15 * M, 300_000, 3_750_000]),
        ("claude-sonnet-4", [3 * M, 15 * M, 300_000, 3_750_000]),
        ("claude-haiku-4-5", [M, 5 * M, 100_000, 1_250_000]),
        ("claude-3-5-haiku", [800_000, 4 * M, 80_000, M]),
        ("claude-3-haiku", [250_000, 1_250_000, 30_000, 300_000]),
        // OpenAI.
        ("gpt-4.1", [2 * M, 8 * M, 500_000, 2 * M]),
        ("gpt-4.1-mini", [400_000, 1_600_000, 100_000, 400_000]),
        ("gpt-4o", [2_500_000, 10 * M, 1_250_000, 2_500_000]),
        ("gpt-4o-mini", [150_000, 600_000, 75_000, 150_000]),
        ("gpt-5-mini", [250_000, 2 * M, 25_000, 250_000]),
        ("gpt-5-nano", [50_000, 400_000, 5_000, 50_000]),
        ("o3-mini", [1_100_000, 4_400_000, 550_000, 1_100_000]),
        ("o4-mini", [1_100_000, 4_400_000, 275_000, 1_100_000]),
    ];
    table
        .iter()
        .map(|&(model, [input, output, cache_read, cache_write])| ModelPrice {
            model: model.to_owned(),
            input,
            output,
            cache_read,
            cache_write,
            // Only Anthropic's models are cached on request, and so charge for writes.
            cache_write_long: model.starts_with("claude-").then_some(2 * input),
            as_of: BUILT_IN_AS_OF.to_owned(),
        })
        .collect()
}

/// When the built-in prices were read from the providers' lists.
pub const BUILT_IN_AS_OF: &str = "2026-11";

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            ..Usage::default()
        }
    }

    fn model(name: &str, u: Usage) -> ModelUsage {
        ModelUsage { model: Some(name.to_owned()), usage: u }
    }

    const SONNET: Price = Price {
        input: 3_000_000,
        output: 15_000_000,
        cache_read: 300_000,
        cache_write: 3_750_000,
        cache_write_long: 6_000_000,
    };

    #[test]
    fn every_kind_of_token_is_priced_at_its_own_rate() {
        // 1M of each at Sonnet's rates: $3 + $15 + $0.30 + $3.75.
        let m = 1_000_000;
        assert_eq!(cost_micro_usd(&usage(m, 0, 0, 0), &SONNET), 3_000_000);
        assert_eq!(cost_micro_usd(&usage(0, m, 0, 0), &SONNET), 15_000_000);
        assert_eq!(cost_micro_usd(&usage(0, 0, m, 0), &SONNET), 300_000);
        assert_eq!(cost_micro_usd(&usage(0, 0, 0, m), &SONNET), 3_750_000);
        assert_eq!(cost_micro_usd(&usage(m, m, m, m), &SONNET), 22_050_000);
        // A Claude Code reply: 3 fresh, 8,216 written to and 17,842 read from the cache, 9 out.
        // 3×3 + 9×15 + 17,842×0.3 + 8,216×3.75 micro-dollars = 36,306.6 → 36,307.
        let reply = usage(3, 9, 17_842, 8_216);
        assert_eq!(cost_picodollars(&reply, &SONNET), 36_306_600_000);
        assert_eq!(cost_micro_usd(&reply, &SONNET), 36_307);
        // An hour's writes at twice the input price.
        let long = Usage { cache_write_long_tokens: m, ..Usage::default() };
        assert_eq!(cost_micro_usd(&long, &SONNET), 6_000_000);
        let built_in = PriceTable::default();
        let sonnet = built_in.get("claude-sonnet-4-5").unwrap().price();
        assert_eq!(sonnet, SONNET);
        // OpenAI charges no writes: any it reported would be input.
        let gpt = built_in.get("gpt-4.1").unwrap().price();
        assert_eq!((gpt.cache_write, gpt.cache_write_long), (gpt.input, gpt.input));
    }

    #[test]
    fn rounding_is_half_up_once_on_the_exact_sum() {
        assert_eq!(round_to_micro_usd(499_999), 0);
        assert_eq!(round_to_micro_usd(500_000), 1);
        assert_eq!(round_to_micro_usd(1_499_999), 1);
        assert_eq!(round_to_micro_usd(u128::MAX / 2), u64::MAX, "saturates");
        // A thousand replies of 1 input token at $0.15/MTok: 0.15 µ$ each. Rounded one by one
        // they would cost nothing; the exact sum is 150 µ$.
        let cheap = Price { input: 150_000, ..Price::default() };
        let mut total = CostTotal::default();
        for _ in 0..1000 {
            total.add(&model("gpt-4o-mini", usage(1, 0, 0, 0)), Some(&cheap));
        }
        assert_eq!(cost_micro_usd(&usage(1, 0, 0, 0), &cheap), 0);
        assert_eq!(total.summary().micro_usd, 150);
        // The largest counts cannot overflow: 2^64 tokens at the highest price fit in u128.
        let most = usage(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        let dear = Price {
            input: MAX_PRICE_MICRO_USD,
            output: MAX_PRICE_MICRO_USD,
            cache_read: MAX_PRICE_MICRO_USD,
            cache_write: MAX_PRICE_MICRO_USD,
            cache_write_long: MAX_PRICE_MICRO_USD,
        };
        let most = Usage { cache_write_long_tokens: u64::MAX, ..most };
        assert_eq!(cost_micro_usd(&most, &dear), u64::MAX);
    }

    #[test]
    fn unknown_prices_keep_their_tokens_and_make_a_cost_partial_or_unknown() {
        let mut total = CostTotal::default();
        assert_eq!(total.summary().completeness, Completeness::None);
        total.add(&model("llama3.1:8b", usage(100, 20, 0, 0)), None);
        let unknown = total.summary();
        assert_eq!(unknown.completeness, Completeness::Unknown);
        assert_eq!((unknown.micro_usd, unknown.unpriced_usage), (0, usage(100, 20, 0, 0)));
        assert_eq!(unknown.unpriced_models, ["llama3.1:8b"]);
        total.add(&model("claude-sonnet-4-5", usage(1_000_000, 0, 0, 0)), Some(&SONNET));
        total.add(&ModelUsage { model: None, usage: usage(5, 0, 0, 0) }, None);
        let partial = total.summary();
        assert_eq!(partial.completeness, Completeness::Partial);
        assert_eq!(partial.micro_usd, 3_000_000);
        assert_eq!(partial.usage, usage(1_000_105, 20, 0, 0));
        assert_eq!(partial.unpriced_models, [NO_MODEL, "llama3.1:8b"]);
        // Zeros reported by a model with no price leave a priced cost complete.
        let mut zeros = CostTotal::default();
        zeros.add(&model("claude-sonnet-4-5", usage(10, 0, 0, 0)), Some(&SONNET));
        zeros.add(&model("<synthetic>", Usage::default()), None);
        assert_eq!(zeros.summary().completeness, Completeness::Complete);
    }

    #[test]
    fn dated_snapshots_take_their_base_names_price_unless_they_have_their_own() {
        let table = PriceTable::default();
        let sonnet = table.get("claude-sonnet-4-5").unwrap();
        assert_eq!(table.get("claude-sonnet-4-5-20250929"), Some(sonnet));
        assert_eq!(table.get("gpt-4o-2024-08-06"), table.get("gpt-4o"));
        assert_eq!(table.get("claude-3-5-haiku-latest"), table.get("claude-3-5-haiku"));
        assert_eq!(table.get("claude-opus-4-20250514"), table.get("claude-opus-4"));
        assert!(table.get("gpt-4o-2024-05-13").is_none(), "listed at another price");
        for unknown in ["llama3.1:8b", "claude-sonnet-5-5", "gpt-4o-audio-preview", "gpt-5", "o3"] {
            assert!(table.get(unknown).is_none(), "{unknown}");
        }
        // Opus 4.5 is not Opus 4: the longest name is not guessed at, the entry is exact.
        assert_ne!(
            table.get("claude-opus-4-5").unwrap().input,
            table.get("claude-opus-4").unwrap().input
        );
        assert_eq!(base_name("m-2024-13"), None);
        assert_eq!(base_name("o4-mini"), None);
        assert_eq!(base_name("v-1-22-333"), None);
    }

    #[test]
    fn the_settings_prices_replace_and_add_to_the_built_in_ones() {
        let mine = |model: &str, input: u64| ModelPrice {
            model: model.to_owned(),
            input,
            output: 0,
            cache_read: 0,
            cache_write: 0,
            cache_write_long: None,
            as_of: "2027-01".to_owned(),
        };
        let table = PriceTable::with_overrides(&[mine("gpt-4o", 1), mine("llama3.1:8b", 2)]);
        assert_eq!(table.get("gpt-4o-2024-11-20").unwrap().input, 1);
        assert_eq!(table.get("llama3.1:8b").unwrap().as_of, "2027-01");
        assert_eq!(table.entries().len(), built_in_prices().len() + 1);
        check_prices(&built_in_prices()).unwrap();
    }

    #[test]
    fn prices_that_cannot_be_trusted_are_refused() {
        let ok = ModelPrice {
            model: "m".into(),
            input: 1,
            output: 2,
            cache_read: 0,
            cache_write: 0,
            cache_write_long: None,
            as_of: "2026-11".into(),
        };
        check_prices(std::slice::from_ref(&ok)).unwrap();
        let cases = [
            (ModelPrice { model: "".into(), ..ok.clone() }, "names no model"),
            (ModelPrice { model: " m".into(), ..ok.clone() }, "white space"),
            (ModelPrice { model: "x".repeat(201), ..ok.clone() }, "longer than 200"),
            (ModelPrice { output: MAX_PRICE_MICRO_USD + 1, ..ok.clone() }, "output price of m"),
            (ModelPrice { as_of: "x".repeat(33), ..ok.clone() }, "as of"),
            (
                ModelPrice { cache_write_long: Some(MAX_PRICE_MICRO_USD + 1), ..ok.clone() },
                "one-hour cache write price of m",
            ),
        ];
        for (price, why) in cases {
            let err = check_prices(&[price]).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        assert!(check_prices(&[ok.clone(), ok.clone()]).unwrap_err().contains("priced twice"));
        let many: Vec<ModelPrice> =
            (0..=MAX_PRICES).map(|i| ModelPrice { model: format!("m{i}"), ..ok.clone() }).collect();
        assert!(check_prices(&many).unwrap_err().contains("at most 1000"));
    }

    #[test]
    fn amounts_read_as_dollars() {
        assert_eq!(format_usd(0), "$0.00");
        assert_eq!(format_usd(1), "<$0.0001");
        assert_eq!(format_usd(99), "<$0.0001");
        assert_eq!(format_usd(100), "$0.0001");
        assert_eq!(format_usd(3_149), "$0.0031");
        assert_eq!(format_usd(3_150), "$0.0032");
        assert_eq!(format_usd(9_999), "$0.0100");
        assert_eq!(format_usd(10_000), "$0.01");
        assert_eq!(format_usd(424_999), "$0.42");
        assert_eq!(format_usd(22_050_000), "$22.05");
        assert_eq!(format_usd(1_234_567_890_000), "$1234567.89");
    }

    /// The window writes costs in TypeScript (`ui/src/cost-text.ts`) by the same rules as
    /// `format_usd` and `CostSummary::describe`. Rather than restate them, both sides check the
    /// cases in `ui/src/cost-text.cases.json`: this test writes what Rust says (with
    /// `FLAME_BLESS` set, as `make bless` runs it) or fails when the file says otherwise, and the
    /// window's test expects the same words from its own functions.
    #[test]
    fn the_window_s_cost_text_cases_are_what_rust_writes() {
        #[derive(Serialize)]
        struct Described {
            cost: CostSummary,
            text: String,
        }
        #[derive(Serialize)]
        struct Cases {
            amounts: Vec<(u64, String)>,
            summaries: Vec<Described>,
        }
        let amounts = [
            0,
            1,
            99,
            100,
            3_149,
            3_150,
            9_949,
            9_950,
            9_999,
            10_000,
            14_999,
            424_999,
            995_000,
            22_050_000,
            1_234_567_890_000,
        ];
        let unpriced = |micro_usd, completeness, tokens: u64, models: &[&str]| CostSummary {
            micro_usd,
            completeness,
            usage: usage(tokens + 2_000, 300, 0, 0),
            unpriced_usage: usage(tokens, 0, tokens / 10, 7),
            unpriced_models: models.iter().map(|m| (*m).to_owned()).collect(),
        };
        let summaries = [
            CostSummary::default(),
            unpriced(420_000, Completeness::Complete, 0, &[]),
            unpriced(3_149, Completeness::Complete, 0, &[]),
            unpriced(420_000, Completeness::Partial, 1_234, &["llama3.1:8b"]),
            unpriced(50, Completeness::Partial, 1_234_567, &["llama3.1:8b", NO_MODEL]),
            unpriced(0, Completeness::Unknown, 999, &["qwen3:0.6b"]),
            unpriced(0, Completeness::Unknown, 12_345_678_901, &["a", "b", "c"]),
        ];
        let cases = Cases {
            amounts: amounts.iter().map(|&micro| (micro, format_usd(micro))).collect(),
            summaries: summaries
                .into_iter()
                .map(|cost| Described { text: cost.describe(), cost })
                .collect(),
        };
        let written = serde_json::to_string_pretty(&cases).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../ui/src/cost-text.cases.json");
        if std::env::var_os("FLAME_BLESS").is_some() {
            std::fs::write(&path, &written).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == written,
            "{} is not what Rust writes (run `make bless` if the change is intended):\n{written}",
            path.display()
        );
    }

    #[test]
    fn a_cost_says_in_words_what_it_covers() {
        let mut total = CostTotal::default();
        assert_eq!(total.summary().describe(), "nothing recorded");
        total.add(&model("claude-sonnet-4-5", usage(140_000, 0, 0, 0)), Some(&SONNET));
        assert_eq!(total.summary().describe(), "$0.42");
        total.add(&model("llama3.1:8b", usage(1_000, 234, 0, 0)), None);
        assert_eq!(
            total.summary().describe(),
            "$0.42 + 1,234 tokens of llama3.1:8b at an unknown price"
        );
        let mut unknown = CostTotal::default();
        unknown.add(&model("llama3.1:8b", usage(999, 1, 0, 0)), None);
        assert_eq!(unknown.summary().describe(), "price unknown: 1,000 tokens of llama3.1:8b");
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_subtree_costs_its_own_and_every_descendants_usage() {
        let mut ids = crate::IdSource::seeded(7);
        let (root, child, grandchild, idle) =
            (ids.frame_id(), ids.frame_id(), ids.frame_id(), ids.frame_id());
        // Given children first, to show the order does not matter.
        let parents = vec![
            (grandchild.clone(), Some(child.clone())),
            (child.clone(), Some(root.clone())),
            (root.clone(), None),
            (idle.clone(), Some(root.clone())),
        ];
        let table = PriceTable::default();
        let usage_rows = [
            (root.clone(), model("claude-sonnet-4-5-20250929", usage(1_000_000, 0, 0, 0))),
            (child.clone(), model("claude-haiku-4-5", usage(0, 1_000_000, 0, 0))),
            (child.clone(), model("llama3.1:8b", usage(7, 3, 0, 0))),
            (grandchild.clone(), model("claude-sonnet-4-5", usage(0, 0, 1_000_000, 0))),
        ];
        let costs = frame_costs(&parents, usage_rows.iter().map(|(f, u)| (f, u)), &table);
        assert!(!costs.contains_key(&idle), "a frame with no usage below it costs nothing known");
        let g = &costs[&grandchild];
        assert_eq!((g.own.micro_usd, g.subtree.micro_usd), (300_000, 300_000));
        let c = &costs[&child];
        assert_eq!((c.own.micro_usd, c.subtree.micro_usd), (5_000_000, 5_300_000));
        assert_eq!(c.own.completeness, Completeness::Partial);
        assert_eq!(c.models.len(), 2);
        assert_eq!(c.models[1].micro_usd, None, "llama has no price");
        let r = &costs[&root];
        assert_eq!((r.own.micro_usd, r.subtree.micro_usd), (3_000_000, 8_300_000));
        assert_eq!(r.own.completeness, Completeness::Complete);
        assert_eq!(r.subtree.completeness, Completeness::Partial);
        assert_eq!(r.subtree.unpriced_models, ["llama3.1:8b"]);
        assert_eq!(r.subtree.usage, usage(1_000_007, 1_000_003, 1_000_000, 0));
        assert_eq!(r.models[0].as_of.as_deref(), Some(BUILT_IN_AS_OF));
    }
}
