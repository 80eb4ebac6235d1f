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
//! again after each message. The costs worked out from it are kept too, with the prices they
//! used, until an event or new prices make them stale: the window reads one frame's cost at a
//! time ([`Flame::frame_cost`]), each a look-up after the outline's read.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use flame_model::cost::{
    CostTotal, FrameCost, ModelPrice, ModelUsage, Price, PriceTable, frame_costs,
};
use flame_model::{FrameId, FrameOutline, TreeId};
use flame_store::{Store, StoreError};

use crate::frames::resolve_tree;
use crate::{ApiError, Flame, MAX_EVENTS_FOLLOWED};

/// The prices a [`Flame`] uses, set by its front end.
#[derive(Debug, Default)]
pub(crate) struct Prices(RwLock<PriceTable>);

impl Prices {
    pub(crate) fn get(&self) -> PriceTable {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// The recorded usage of the tree last asked about, by frame, as of an event seq.
#[derive(Debug, Default)]
pub(crate) struct UsageCache(Mutex<Option<TreeUsage>>);

#[derive(Debug)]
struct TreeUsage {
    tree: TreeId,
    /// Every event up to this one is in `by_frame`.
    seq: i64,
    by_frame: HashMap<FrameId, Vec<ModelUsage>>,
    /// The costs worked out from `by_frame` as of `seq`, and the prices they used.
    priced: Option<(PriceTable, Arc<HashMap<FrameId, FrameCost>>)>,
}

impl UsageCache {
    /// Every frame's cost in tree `tree` at `prices`, from the tree's usage as the store has it
    /// now: the kept usage brought up to date by the events since it was read, or the tree's
    /// read whole; the kept costs when nothing changed since they were worked out.
    pub(crate) fn costs(
        &self,
        store: &Store,
        tree: &TreeId,
        prices: &PriceTable,
    ) -> Result<Arc<HashMap<FrameId, FrameCost>>, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut usage = up_to_date(store, tree, kept.take())?;
        if let Some((priced_at, costs)) = &usage.priced
            && priced_at == prices
        {
            let costs = Arc::clone(costs);
            *kept = Some(usage);
            return Ok(costs);
        }
        let costs = if usage.by_frame.is_empty() {
            HashMap::new()
        } else {
            let frames = store.outline_of_tree(tree)?;
            let parents: Vec<(FrameId, Option<FrameId>)> =
                frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
            let rows = usage.by_frame.iter().flat_map(|(f, rows)| rows.iter().map(move |r| (f, r)));
            frame_costs(&parents, rows, prices)
        };
        let costs = Arc::new(costs);
        usage.priced = Some((prices.clone(), Arc::clone(&costs)));
        *kept = Some(usage);
        Ok(costs)
    }

    /// Reads tree `tree`'s usage into the cache unless it is there, without pricing it: the
    /// first outline of the tree then only follows the events since.
    fn read_ahead(&self, store: &Store, tree: &TreeId) -> Result<(), StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *kept = Some(up_to_date(store, tree, kept.take())?);
        Ok(())
    }
}

/// What the outline carries of the costs: each frame's own priced cost (micro-dollars, frames
/// where it is more than nothing) and the focused frame's whole cost.
pub(crate) struct OutlineCosts {
    pub(crate) own: HashMap<FrameId, u64>,
    pub(crate) focus: Option<FrameCost>,
}

impl UsageCache {
    /// The outline's costs of `frames` (tree `tree`'s, just read): from the kept costs when they
    /// are current, else without working out every frame's whole cost — each frame's own replies
    /// priced, and the focus's subtree added up — which every change would otherwise cost in
    /// full at each reload of a large tree's graph.
    pub(crate) fn outline_costs(
        &self,
        store: &Store,
        tree: &TreeId,
        frames: &[FrameOutline],
        focus: &FrameId,
        prices: &PriceTable,
    ) -> Result<OutlineCosts, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let usage = match kept.take() {
            Some(usage) if usage.tree == *tree => follow(store, usage)?,
            _ => read_whole(store, tree)?,
        };
        let costs = match &usage.priced {
            Some((priced_at, costs)) if priced_at == prices => OutlineCosts {
                own: costs
                    .iter()
                    .filter(|(_, cost)| cost.own.micro_usd > 0)
                    .map(|(frame, cost)| (frame.clone(), cost.own.micro_usd))
                    .collect(),
                focus: costs.get(focus).cloned(),
            },
            _ => priced_for_outline(&usage.by_frame, frames, focus, prices),
        };
        *kept = Some(usage);
        Ok(costs)
    }
}

/// [`OutlineCosts`] from a tree's usage: every frame's own cost, and `focus`'s whole cost from
/// the frames of its subtree alone.
fn priced_for_outline(
    by_frame: &HashMap<FrameId, Vec<ModelUsage>>,
    frames: &[FrameOutline],
    focus: &FrameId,
    prices: &PriceTable,
) -> OutlineCosts {
    // A tree names a few models over thousands of rows: each is looked up once.
    let mut price_of: HashMap<&str, Option<Price>> = HashMap::new();
    let mut own = HashMap::new();
    for (frame, rows) in by_frame {
        let mut total = CostTotal::default();
        for row in rows {
            let price = row.model.as_deref().and_then(|m| {
                *price_of.entry(m).or_insert_with(|| prices.get(m).map(ModelPrice::price))
            });
            total.add(row, price.as_ref());
        }
        let micro = total.summary().micro_usd;
        if micro > 0 {
            own.insert(frame.clone(), micro);
        }
    }
    // The focus's subtree, walked down from it through each frame's children.
    let mut children: HashMap<&FrameId, Vec<&FrameOutline>> = HashMap::new();
    for frame in frames {
        if let Some(parent) = &frame.parent {
            children.entry(parent).or_default().push(frame);
        }
    }
    // The focus is the subtree's root: its own parent is outside it. A cycle (which the store's
    // invariants forbid) stops the walk once it is longer than the tree.
    let mut subtree: Vec<(FrameId, Option<FrameId>)> = vec![(focus.clone(), None)];
    let mut at = 0;
    while at < subtree.len() && subtree.len() <= frames.len() {
        let id = subtree[at].0.clone();
        for child in children.get(&id).into_iter().flatten() {
            subtree.push((child.id.clone(), Some(id.clone())));
        }
        at += 1;
    }
    let rows = subtree
        .iter()
        .filter_map(|(id, _)| by_frame.get_key_value(id))
        .flat_map(|(frame, rows)| rows.iter().map(move |row| (frame, row)));
    let focus_cost = frame_costs(&subtree, rows, prices).remove(focus);
    OutlineCosts { own, focus: focus_cost }
}

/// The tree's usage read whole, as of the newest event (read first, so a change made meanwhile
/// is followed next time rather than missed).
/// Tree `tree`'s usage as the store has it now: `kept` brought up to date when it is that
/// tree's, else read whole.
fn up_to_date(
    store: &Store,
    tree: &TreeId,
    kept: Option<TreeUsage>,
) -> Result<TreeUsage, StoreError> {
    match kept {
        Some(usage) if usage.tree == *tree => follow(store, usage),
        _ => read_whole(store, tree),
    }
}

fn read_whole(store: &Store, tree: &TreeId) -> Result<TreeUsage, StoreError> {
    let seq = store.latest_event_seq()?;
    let mut by_frame: HashMap<FrameId, Vec<ModelUsage>> = HashMap::new();
    for (frame, row) in store.usage_by_frame_and_model(tree)? {
        by_frame.entry(frame).or_default().push(row);
    }
    Ok(TreeUsage { tree: tree.clone(), seq, by_frame, priced: None })
}

/// `usage` brought up to date: the frames of its tree named by the events since are read again.
fn follow(store: &Store, mut usage: TreeUsage) -> Result<TreeUsage, StoreError> {
    let events = store.events_since(usage.seq, MAX_EVENTS_FOLLOWED + 1)?;
    if events.len() > MAX_EVENTS_FOLLOWED as usize {
        return read_whole(store, &usage.tree);
    }
    let Some(last) = events.last().map(|e| e.seq) else { return Ok(usage) };
    // Any event may have changed a usage or the tree's shape: the costs are worked out again.
    usage.priced = None;
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
        Ok(HashMap::clone(&*self.costs_of_tree(&store, &id)?))
    }

    /// One frame's cost: its own and its subtree's, and its own usage by model (nothing
    /// recorded is a default cost). After the tree's outline or another of its frames' costs
    /// was read, and while nothing changed, it is a look-up.
    pub fn frame_cost(&self, frame: &FrameId) -> Result<FrameCost, ApiError> {
        let store = self.store();
        let tree = store.frame(frame)?.tree;
        Ok(self.costs_of_tree(&store, &tree)?.get(frame).cloned().unwrap_or_default())
    }

    /// Reads the current tree's recorded usage ahead of its first outline, which then only
    /// brings it up to date. On a large tree the usage is the slowest part of the outline (100k
    /// frames: about a quarter of a second), so a front end calls this while its window starts,
    /// off the path to the first frame drawn. Nothing is read when there is no current tree.
    pub fn read_usage_ahead(&self) -> Result<(), ApiError> {
        let store = self.store();
        let Some(tree) = store.current_tree()? else { return Ok(()) };
        Ok(self.usage.read_ahead(&store, &tree)?)
    }

    /// `tree`'s frame costs at the prices in use.
    pub(crate) fn costs_of_tree(
        &self,
        store: &Store,
        tree: &TreeId,
    ) -> Result<Arc<HashMap<FrameId, FrameCost>>, StoreError> {
        self.usage.costs(store, tree, &self.prices.get())
    }

    /// What the outline of `frames` (tree `tree`'s, just read, focused on `focus`) carries of
    /// the costs at the prices in use.
    pub(crate) fn costs_of_outline(
        &self,
        store: &Store,
        tree: &TreeId,
        frames: &[FrameOutline],
        focus: &FrameId,
    ) -> Result<OutlineCosts, StoreError> {
        self.usage.outline_costs(store, tree, frames, focus, &self.prices.get())
    }
}
