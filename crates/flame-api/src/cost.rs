//! What a tree's frames cost: the store's usage aggregate priced with the prices the front end
//! set.
//!
//! The facade knows no settings file. Each front end reads the person's prices from its settings
//! (`flame_agent::Settings::price_table`) and hands them over with [`Flame::set_prices`] when it
//! opens Flame and whenever they are saved, the way the checkpoint cap is handed over; until
//! then the built-in prices are used. The outline, the command line's status and the exports
//! read costs through here.
//!
//! The usage of the last tree asked about is kept with the event seq it was read at: the next
//! read follows the events since (every change to a reply's usage records one naming its frame)
//! and reads again only the frames they name, so a large tree's graph does not add up every reply
//! again after each message.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError, RwLock};

use flame_model::cost::{FrameCost, ModelUsage, PriceTable, frame_costs};
use flame_model::{FrameId, FrameOutline, TreeId};
use flame_store::{Store, StoreError};

use crate::frames::resolve_tree;
use crate::{ApiError, Flame};

/// The prices a [`Flame`] uses, set by its front end.
#[derive(Debug, Default)]
pub(crate) struct Prices(RwLock<PriceTable>);

impl Prices {
    pub(crate) fn get(&self) -> PriceTable {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// How many events since the kept usage was read are followed before the tree's usage is read
/// whole again instead.
const MAX_EVENTS_FOLLOWED: u32 = 2_000;

/// The recorded usage of the tree last asked about, by frame, as of an event seq.
#[derive(Debug, Default)]
pub(crate) struct UsageCache(Mutex<Option<TreeUsage>>);

#[derive(Debug)]
struct TreeUsage {
    tree: TreeId,
    /// Every event up to this one is in `by_frame`.
    seq: i64,
    by_frame: HashMap<FrameId, Vec<ModelUsage>>,
}

impl UsageCache {
    /// The costs of `frames` (tree `tree`'s outline, just read) at `prices`, from the tree's
    /// usage as the store has it now: the kept usage brought up to date by the events since it
    /// was read, or the tree's read whole.
    pub(crate) fn costs(
        &self,
        store: &Store,
        tree: &TreeId,
        frames: Option<&[FrameOutline]>,
        prices: &PriceTable,
    ) -> Result<HashMap<FrameId, FrameCost>, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let usage = match kept.take() {
            Some(usage) if usage.tree == *tree => follow(store, usage)?,
            _ => read_whole(store, tree)?,
        };
        let costs = if usage.by_frame.is_empty() {
            HashMap::new()
        } else {
            let read;
            let frames = match frames {
                Some(frames) => frames,
                None => {
                    read = store.outline_of_tree(tree)?;
                    &read
                }
            };
            let parents: Vec<(FrameId, Option<FrameId>)> =
                frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
            let rows = usage.by_frame.iter().flat_map(|(f, rows)| rows.iter().map(move |r| (f, r)));
            frame_costs(&parents, rows, prices)
        };
        *kept = Some(usage);
        Ok(costs)
    }
}

/// The tree's usage read whole, as of the newest event (read first, so a change made meanwhile
/// is followed next time rather than missed).
fn read_whole(store: &Store, tree: &TreeId) -> Result<TreeUsage, StoreError> {
    let seq = store.latest_event_seq()?;
    let mut by_frame: HashMap<FrameId, Vec<ModelUsage>> = HashMap::new();
    for (frame, row) in store.usage_by_frame_and_model(tree)? {
        by_frame.entry(frame).or_default().push(row);
    }
    Ok(TreeUsage { tree: tree.clone(), seq, by_frame })
}

/// `usage` brought up to date: the frames of its tree named by the events since are read again.
fn follow(store: &Store, mut usage: TreeUsage) -> Result<TreeUsage, StoreError> {
    let events = store.events_since(usage.seq, MAX_EVENTS_FOLLOWED + 1)?;
    if events.len() > MAX_EVENTS_FOLLOWED as usize {
        return read_whole(store, &usage.tree);
    }
    let Some(last) = events.last().map(|e| e.seq) else { return Ok(usage) };
    let named: HashSet<&FrameId> =
        events.iter().filter(|e| e.tree == usage.tree).map(|e| &e.frame).collect();
    for frame in named {
        let rows = store.usage_by_model(frame)?;
        if rows.is_empty() {
            usage.by_frame.remove(frame);
        } else {
            usage.by_frame.insert(frame.clone(), rows);
        }
    }
    usage.seq = last;
    Ok(usage)
}

impl Flame {
    /// Prices model calls with `prices` from now on (the built-in table with the person's
    /// entries over it).
    pub fn set_prices(&self, prices: PriceTable) {
        *self.prices.0.write().unwrap_or_else(PoisonError::into_inner) = prices;
    }

    /// The prices in use.
    pub fn prices(&self) -> PriceTable {
        self.prices.get()
    }

    /// Every frame's cost in a tree (the current one if `tree` is `None`): its own messages'
    /// recorded usage, priced by each message's model, and its subtree's. Frames whose subtree
    /// recorded no usage are left out.
    pub fn tree_costs(
        &self,
        tree: Option<&TreeId>,
    ) -> Result<HashMap<FrameId, FrameCost>, ApiError> {
        let store = self.store();
        let id = resolve_tree(&store, tree)?;
        Ok(self.costs_of_tree(&store, &id)?)
    }

    /// One frame's cost: its own and its subtree's (nothing recorded is a default cost).
    pub fn frame_cost(&self, frame: &FrameId) -> Result<FrameCost, ApiError> {
        let store = self.store();
        let tree = store.frame(frame)?.tree;
        Ok(self.costs_of_tree(&store, &tree)?.remove(frame).unwrap_or_default())
    }

    /// `tree`'s frame costs at the prices in use.
    pub(crate) fn costs_of_tree(
        &self,
        store: &Store,
        tree: &TreeId,
    ) -> Result<HashMap<FrameId, FrameCost>, StoreError> {
        self.usage.costs(store, tree, None, &self.prices.get())
    }

    /// The costs of `frames` (tree `tree`'s outline, just read) at the prices in use.
    pub(crate) fn costs_of_outline(
        &self,
        store: &Store,
        tree: &TreeId,
        frames: &[FrameOutline],
    ) -> Result<HashMap<FrameId, FrameCost>, StoreError> {
        self.usage.costs(store, tree, Some(frames), &self.prices.get())
    }
}
