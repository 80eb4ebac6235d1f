//! What the facade works with from the person's settings: the storage a workspace's checkpoints
//! may take, how many of a frame's newest tool results its context sends in full, what model
//! calls cost, and whether openings start with the project instructions (and where the person's
//! own file of them is).
//!
//! The facade knows no settings file (`flame-settings` does, above it). A front end reads its
//! settings, passes their [`FlameConfig`] to `Flame::open`, and replaces it whole with
//! [`Flame::reconfigure`] when the person saves them, so costs, masking and the checkpoint cap
//! follow the settings at once. A Flame opened with [`FlameConfig::default`] uses the built-in
//! prices, `flame_context::DEFAULT_KEEP_TOOL_RESULTS` and [`DEFAULT_CHECKPOINT_CAP_BYTES`].

use std::path::PathBuf;
use std::sync::{PoisonError, RwLock};

use flame_model::cost::PriceTable;

use crate::{DEFAULT_CHECKPOINT_CAP_BYTES, Flame};

/// The facade's configuration, from the person's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlameConfig {
    /// The storage a workspace's checkpoints may take before the oldest are pruned.
    pub checkpoint_cap_bytes: u64,
    /// How many of a frame's newest tool results its context sends in full; older ones are
    /// masked (`flame_context`'s observation masking).
    pub keep_tool_results: usize,
    /// What model calls cost: the built-in table with the person's entries over it.
    pub prices: PriceTable,
    /// Whether a frame's opening starts with the project instructions: the workspace's
    /// `AGENTS.md` and `CLAUDE.md` files and the person's own (`instructions.rs`).
    pub project_instructions: bool,
    /// The person's own file of instructions (`AGENTS.md` in Flame's configuration folder,
    /// which `flame-settings` finds); `None` when there is no such folder.
    pub personal_instructions: Option<PathBuf>,
}

impl Default for FlameConfig {
    fn default() -> FlameConfig {
        FlameConfig {
            checkpoint_cap_bytes: DEFAULT_CHECKPOINT_CAP_BYTES,
            keep_tool_results: flame_context::DEFAULT_KEEP_TOOL_RESULTS,
            prices: PriceTable::default(),
            project_instructions: true,
            personal_instructions: None,
        }
    }
}

/// The configuration a [`Flame`] works with now.
#[derive(Debug)]
pub(crate) struct Config(RwLock<FlameConfig>);

impl Config {
    pub(crate) fn new(config: FlameConfig) -> Config {
        Config(RwLock::new(config))
    }

    fn read<T>(&self, read: impl FnOnce(&FlameConfig) -> T) -> T {
        read(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn checkpoint_cap_bytes(&self) -> u64 {
        self.read(|config| config.checkpoint_cap_bytes)
    }

    pub(crate) fn keep_tool_results(&self) -> usize {
        self.read(|config| config.keep_tool_results)
    }

    pub(crate) fn prices(&self) -> PriceTable {
        self.read(|config| config.prices.clone())
    }

    /// Where the project instructions come from when openings start with them: the person's
    /// own file, if any; `None` when they are turned off.
    pub(crate) fn instructions(&self) -> Option<Option<PathBuf>> {
        self.read(|config| {
            config.project_instructions.then(|| config.personal_instructions.clone())
        })
    }

    /// Runs `read` on the prices without copying them.
    pub(crate) fn with_prices<T>(&self, read: impl FnOnce(&PriceTable) -> T) -> T {
        self.read(|config| read(&config.prices))
    }
}

impl Flame {
    /// Works with `config` from now on, in place of the configuration it was opened or last
    /// reconfigured with: what the window calls when the person saves the settings. The same
    /// configuration again changes nothing.
    pub fn reconfigure(&self, config: FlameConfig) {
        let mut current = self.config.0.write().unwrap_or_else(PoisonError::into_inner);
        if *current == config {
            return;
        }
        *current = config;
        drop(current);
        // An outline read ahead is priced at the old prices, and no event says they changed.
        self.outline_ahead.forget();
    }
}
