//! What a tree's frames cost: the store's usage aggregate priced with the prices of the facade's
//! configuration (`config.rs`: the person's settings', passed when Flame is opened and replaced
//! when they are saved). The outline, the command line's status and the exports read costs
//! through here.
//!
//! The usage of the last tree asked about is kept with the event seq it was read at: the next
//! read follows the events since (every change to a reply's usage records one naming its frame)
//! and reads again only the frames they name, so a large tree's graph does not add up every reply
//! again after each message. The window reads one frame's whole cost at a time
//! ([`Flame::frame_cost`], the graph's tooltip): the tree's shape is kept with the usage until an
//! event, and each frame's cost is added up from its subtree's rows when asked for; every frame's
//! cost is not kept (at 100k frames it was some 80 MiB).
//!
//! The kept usage is compact (`UsageRows`: one vector of rows sorted by frame, each naming its
//! model by index, about 5 MiB at 100k frames where a map of vectors held 20); past
//! `MAX_EVENTS_FOLLOWED` events the tree is read whole again. The outline carries only each frame's
//! own priced cost (`TreeOutline::own_costs`, the graph's widths by cost) and the focused frame's
//! whole cost (`focus_cost`, the chat pane's), worked out from the same kept shape. Every cost, the
//! command line's and the exports' included, is the usage aggregate priced with
//! `flame_model::cost::frame_costs`.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use flame_model::cost::{
    CostTotal, FrameCost, ModelPrice, ModelUsage, Price, PriceTable, frame_costs,
};
use flame_model::{FrameId, FrameOutline, TreeId, Usage};
use flame_store::{Store, StoreError};

use crate::frames::resolve_tree;
use crate::{ApiError, Flame, MAX_EVENTS_FOLLOWED};

/// The recorded usage of the tree last asked about, by frame, as of an event seq.
#[derive(Debug, Default)]
pub(crate) struct UsageCache(Mutex<Option<TreeUsage>>);

#[derive(Debug)]
struct TreeUsage {
    tree: TreeId,
    /// Every event up to this one is in `rows`.
    seq: i64,
    rows: UsageRows,
    /// The tree's frames as of `seq`, once a frame's whole cost was asked for.
    shape: Option<TreeShape>,
}

/// A tree's frames and which are whose children: what a frame's whole cost needs besides the
/// usage, kept so that the graph's tooltip reads one frame's cost at a time without reading the
/// tree again.
///
/// Only the shape is kept, not every frame's cost: a `FrameCost` of each of 100k frames (two
/// summaries, each model's cost with its name and price date) was some 80 MiB, kept for as long
/// as the app ran after the pointer first rested on the graph. A frame's cost is added up from
/// its subtree's rows when it is asked for, as the outline adds up the focus's.
#[derive(Debug)]
struct TreeShape {
    /// Every frame of the tree, sorted: a frame is known by its index here.
    ids: Vec<FrameId>,
    /// Frame `i`'s children are `children[child_start[i]..child_start[i + 1]]`.
    child_start: Vec<u32>,
    children: Vec<u32>,
}

impl TreeShape {
    fn new(frames: &[FrameOutline]) -> TreeShape {
        let mut ids: Vec<FrameId> = frames.iter().map(|f| f.id.clone()).collect();
        ids.sort_unstable();
        let index = |id: &FrameId| ids.binary_search(id).ok();
        // Each frame's parent, by index; a parent not in the tree (which the store's invariants
        // forbid) makes the frame no one's child.
        let links: Vec<(usize, usize)> = frames
            .iter()
            .filter_map(|f| Some((index(f.parent.as_ref()?)?, index(&f.id)?)))
            .collect();
        let mut child_start = vec![0u32; ids.len() + 1];
        for &(parent, _) in &links {
            child_start[parent + 1] += 1;
        }
        for i in 0..ids.len() {
            child_start[i + 1] += child_start[i];
        }
        let mut filled = child_start.clone();
        let mut children = vec![0u32; links.len()];
        for &(parent, child) in &links {
            children[filled[parent] as usize] = child as u32;
            filled[parent] += 1;
        }
        TreeShape { ids, child_start, children }
    }

    /// `frame` and every frame under it, sorted; none when `frame` is not in the tree.
    fn subtree(&self, frame: &FrameId) -> Vec<&FrameId> {
        let Ok(top) = self.ids.binary_search(frame) else { return Vec::new() };
        // Each frame is taken once, so a cycle (which the store's invariants forbid) ends.
        let mut seen = vec![false; self.ids.len()];
        seen[top] = true;
        let mut order = vec![top];
        let mut at = 0;
        while let Some(&i) = order.get(at) {
            let (start, end) = (self.child_start[i] as usize, self.child_start[i + 1] as usize);
            for &child in &self.children[start..end] {
                let child = child as usize;
                if !std::mem::replace(&mut seen[child], true) {
                    order.push(child);
                }
            }
            at += 1;
        }
        // The ids are sorted, so their indexes sort them.
        order.sort_unstable();
        order.into_iter().map(|i| &self.ids[i]).collect()
    }
}

/// A tree's recorded usage, one row per frame and model, kept for as long as the app runs.
///
/// Kept compact because it is the facade's largest lasting holding with a large tree open: as a
/// map from frame to a vector of [`ModelUsage`], the 58k rows of the 100k-frame tree held 20 MiB
/// (each vector allocated for four rows where nearly every frame has one, each row with its own
/// copy of the model's name, and the map's table); as one vector sorted by frame with the
/// model's name given by index, about 5 MiB.
#[derive(Debug, Default)]
struct UsageRows {
    /// Sorted by frame; a frame's rows in the order the store gave them (by model).
    rows: Vec<(FrameId, UsageRow)>,
    /// The models the rows name, each once: a tree names a few over thousands of rows.
    models: Vec<Option<String>>,
}

#[derive(Debug, Clone, Copy)]
struct UsageRow {
    /// An index into [`UsageRows::models`].
    model: u32,
    usage: Usage,
}

impl UsageRows {
    /// The rows of a tree as the store gives them.
    fn new(rows: Vec<(FrameId, ModelUsage)>) -> UsageRows {
        let mut kept = UsageRows::default();
        let mut rows: Vec<(FrameId, UsageRow)> =
            rows.into_iter().map(|(frame, row)| (frame, kept.row(row))).collect();
        // Stable, so a frame's rows keep the store's order; the store groups them by frame
        // already, so this is one pass.
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.shrink_to_fit();
        kept.rows = rows;
        kept
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// `row` with its model interned.
    fn row(&mut self, row: ModelUsage) -> UsageRow {
        let model = match self.models.iter().position(|m| *m == row.model) {
            Some(k) => k,
            None => {
                self.models.push(row.model);
                self.models.len() - 1
            }
        };
        UsageRow { model: model as u32, usage: row.usage }
    }

    /// `frame`'s rows.
    fn of(&self, frame: &FrameId) -> &[(FrameId, UsageRow)] {
        let start = self.rows.partition_point(|(f, _)| f < frame);
        let end = start + self.rows[start..].partition_point(|(f, _)| f == frame);
        &self.rows[start..end]
    }

    /// Replaces the rows of each frame in `fresh` (every frame named, with the rows the store
    /// has for it now, none for a frame that recorded none).
    fn replace(&mut self, fresh: Vec<(FrameId, Vec<ModelUsage>)>) {
        let mut named: Vec<&FrameId> = fresh.iter().map(|(frame, _)| frame).collect();
        named.sort_unstable();
        self.rows.retain(|(frame, _)| named.binary_search(&frame).is_err());
        let mut added = Vec::new();
        for (frame, rows) in fresh {
            for row in rows {
                added.push((frame.clone(), self.row(row)));
            }
        }
        added.sort_by(|a, b| a.0.cmp(&b.0));
        // Two sorted runs: the stable sort merges them in one pass.
        self.rows.extend(added);
        self.rows.sort_by(|a, b| a.0.cmp(&b.0));
    }

    /// The rows as the model's pricing takes them, each with its model's name: for working out
    /// costs, not for keeping.
    fn expanded<'a>(
        &'a self,
        rows: &'a [(FrameId, UsageRow)],
    ) -> impl Iterator<Item = (&'a FrameId, ModelUsage)> + 'a {
        rows.iter().map(|(frame, row)| {
            (frame, ModelUsage { model: self.models[row.model as usize].clone(), usage: row.usage })
        })
    }
}

impl UsageCache {
    /// Every frame's cost in tree `tree` at `prices`, from the tree's usage as the store has it
    /// now: the kept usage brought up to date by the events since it was read, or the tree's
    /// read whole. Worked out afresh each time and not kept (see [`TreeShape`]): what asks for
    /// every frame's cost (the command line's status, an export) asks once.
    pub(crate) fn costs(
        &self,
        store: &Store,
        tree: &TreeId,
        prices: &PriceTable,
    ) -> Result<HashMap<FrameId, FrameCost>, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let usage = up_to_date(store, tree, kept.take())?;
        let costs = if usage.rows.is_empty() {
            HashMap::new()
        } else {
            let frames = store.outline_of_tree(tree)?;
            let parents: Vec<(FrameId, Option<FrameId>)> =
                frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
            let rows: Vec<(&FrameId, ModelUsage)> = usage.rows.expanded(&usage.rows.rows).collect();
            frame_costs(&parents, rows.iter().map(|(f, r)| (*f, r)), prices)
        };
        *kept = Some(usage);
        Ok(costs)
    }

    /// `frame`'s whole cost (tree `tree`'s frame) at `prices`, from its subtree's usage; the
    /// default cost when its subtree recorded none. The tree's shape is read once and kept until
    /// an event, so a frame's cost after another's is a walk of its subtree.
    pub(crate) fn frame_cost(
        &self,
        store: &Store,
        tree: &TreeId,
        frame: &FrameId,
        prices: &PriceTable,
    ) -> Result<FrameCost, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut usage = up_to_date(store, tree, kept.take())?;
        let shape = match usage.shape.take() {
            Some(shape) => shape,
            None => TreeShape::new(&store.outline_of_tree(tree)?),
        };
        let mut pricing = RowPricing::new(&usage.rows, prices);
        let cost = subtree_cost(&usage.rows, &mut pricing, frame, &shape.subtree(frame), prices);
        usage.shape = Some(shape);
        *kept = Some(usage);
        Ok(cost.unwrap_or_default())
    }
}

/// What the outline carries of the costs: each frame's own priced cost (micro-dollars, frames
/// where it is more than nothing) and the focused frame's whole cost.
pub(crate) struct OutlineCosts {
    pub(crate) own: HashMap<FrameId, u64>,
    pub(crate) focus: Option<FrameCost>,
}

impl UsageCache {
    /// The outline's costs of `frames` (tree `tree`'s, just read), without working out every
    /// frame's whole cost — each frame's own replies priced, and the focus's subtree added up —
    /// which every change would otherwise cost in full at each reload of a large tree's graph.
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
        let costs = priced_for_outline(&usage.rows, frames, focus, prices);
        *kept = Some(usage);
        Ok(costs)
    }
}

/// [`OutlineCosts`] from a tree's usage: every frame's own cost, and `focus`'s whole cost from
/// the frames of its subtree alone.
fn priced_for_outline(
    usage: &UsageRows,
    frames: &[FrameOutline],
    focus: &FrameId,
    prices: &PriceTable,
) -> OutlineCosts {
    let mut pricing = RowPricing::new(usage, prices);
    let mut own = HashMap::new();
    for rows in usage.rows.chunk_by(|a, b| a.0 == b.0) {
        let mut total = CostTotal::default();
        for (_, row) in rows {
            pricing.add(&mut total, row);
        }
        let micro = total.summary().micro_usd;
        if micro > 0 {
            own.insert(rows[0].0.clone(), micro);
        }
    }
    // The focus's subtree, walked down from it through each frame's children.
    let mut children: HashMap<&FrameId, Vec<&FrameOutline>> = HashMap::new();
    for frame in frames {
        if let Some(parent) = &frame.parent {
            children.entry(parent).or_default().push(frame);
        }
    }
    // Each frame is taken once, so a cycle (which the store's invariants forbid) ends.
    let mut seen: HashSet<&FrameId> = HashSet::from([focus]);
    let mut subtree: Vec<&FrameId> = vec![focus];
    let mut at = 0;
    while let Some(&id) = subtree.get(at) {
        for child in children.get(id).into_iter().flatten() {
            if seen.insert(&child.id) {
                subtree.push(&child.id);
            }
        }
        at += 1;
    }
    subtree.sort_unstable();
    OutlineCosts { own, focus: subtree_cost(usage, &mut pricing, focus, &subtree, prices) }
}

/// Prices the rows of a tree's usage: each model is priced once, and given as a `ModelUsage` to
/// add its rows through, so that adding a row allocates nothing.
struct RowPricing {
    price_of: Vec<Option<Price>>,
    as_row: Vec<ModelUsage>,
}

impl RowPricing {
    fn new(usage: &UsageRows, prices: &PriceTable) -> RowPricing {
        RowPricing {
            price_of: usage
                .models
                .iter()
                .map(|m| m.as_deref().and_then(|m| prices.get(m)).map(ModelPrice::price))
                .collect(),
            as_row: usage
                .models
                .iter()
                .map(|m| ModelUsage { model: m.clone(), usage: Usage::default() })
                .collect(),
        }
    }

    fn add(&mut self, total: &mut CostTotal, row: &UsageRow) {
        let k = row.model as usize;
        self.as_row[k].usage = row.usage;
        total.add(&self.as_row[k], self.price_of[k].as_ref());
    }
}

/// The whole cost of `top` from the rows of `subtree` (it and every frame under it, sorted);
/// `None` when none of them recorded usage. What `frame_costs` gives the frame when it works out
/// the whole tree: the subtree's usage added up, row by row rather than child by child (the same
/// sums: every sum saturates, and no count is negative), and the frame's own cost and models as
/// `frame_costs` works them out for it alone.
fn subtree_cost(
    usage: &UsageRows,
    pricing: &mut RowPricing,
    top: &FrameId,
    subtree: &[&FrameId],
    prices: &PriceTable,
) -> Option<FrameCost> {
    let mut total = CostTotal::default();
    // Both lists are sorted by frame: a large subtree's rows are found in one pass over the
    // rows, a small one's each by a search.
    let mut rest = usage.rows.as_slice();
    let one_pass = subtree.len().saturating_mul(16) > rest.len();
    for frame in subtree {
        let skip = if one_pass {
            rest.iter().take_while(|(f, _)| f < *frame).count()
        } else {
            rest.partition_point(|(f, _)| f < *frame)
        };
        rest = &rest[skip..];
        let mine = rest.iter().take_while(|(f, _)| f == *frame).count();
        for (_, row) in &rest[..mine] {
            pricing.add(&mut total, row);
        }
        rest = &rest[mine..];
    }
    if total.is_empty() {
        return None;
    }
    let own: Vec<(&FrameId, ModelUsage)> = usage.expanded(usage.of(top)).collect();
    let alone = [(top.clone(), None)];
    let mut cost = frame_costs(&alone, own.iter().map(|(f, r)| (*f, r)), prices)
        .remove(top)
        .unwrap_or_default();
    cost.subtree = total.summary();
    Some(cost)
}

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

/// The tree's usage read whole, as of the newest event (read first, so a change made meanwhile
/// is followed next time rather than missed).
fn read_whole(store: &Store, tree: &TreeId) -> Result<TreeUsage, StoreError> {
    let seq = store.latest_event_seq()?;
    let rows = UsageRows::new(store.usage_by_frame_and_model(tree)?);
    Ok(TreeUsage { tree: tree.clone(), seq, rows, shape: None })
}

/// `usage` brought up to date: the frames of its tree named by the events since are read again.
fn follow(store: &Store, mut usage: TreeUsage) -> Result<TreeUsage, StoreError> {
    let events = store.events_since(usage.seq, MAX_EVENTS_FOLLOWED + 1)?;
    if events.len() > MAX_EVENTS_FOLLOWED as usize {
        return read_whole(store, &usage.tree);
    }
    let Some(last) = events.last().map(|e| e.seq) else { return Ok(usage) };
    // Any event may have changed the tree's shape: it is read again when next needed.
    usage.shape = None;
    let named: HashSet<&FrameId> =
        events.iter().filter(|e| e.tree == usage.tree).map(|e| &e.frame).collect();
    let mut fresh = Vec::with_capacity(named.len());
    for frame in named {
        fresh.push((frame.clone(), store.usage_by_model(frame)?));
    }
    usage.rows.replace(fresh);
    usage.seq = last;
    Ok(usage)
}

impl Flame {
    /// The prices in use.
    pub fn prices(&self) -> PriceTable {
        self.config.prices()
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
        Ok(self.usage.costs(&store, &id, &self.config.prices())?)
    }

    /// One frame's cost: its own and its subtree's, and its own usage by model (nothing
    /// recorded is a default cost). After another of its tree's frames' costs was read, and
    /// while nothing changed, it reads nothing from the store: its subtree's usage is kept.
    pub fn frame_cost(&self, frame: &FrameId) -> Result<FrameCost, ApiError> {
        let store = self.store();
        let tree = store.frame(frame)?.tree;
        Ok(self.usage.frame_cost(&store, &tree, frame, &self.config.prices())?)
    }

    /// `tree`'s frame costs at the prices in use.
    pub(crate) fn costs_of_tree(
        &self,
        store: &Store,
        tree: &TreeId,
    ) -> Result<HashMap<FrameId, FrameCost>, StoreError> {
        self.usage.costs(store, tree, &self.config.prices())
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
        self.usage.outline_costs(store, tree, frames, focus, &self.config.prices())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A completed frame of an outline, under `parent`.
    fn outline_frame(id_text: &str, parent: Option<&str>) -> FrameOutline {
        crate::outline::tests::frame(id_text, parent, 0, flame_model::Status::Completed)
    }

    fn id(text: &str) -> FrameId {
        FrameId::from_trusted(text.to_owned())
    }

    fn usage(model: Option<&str>, input: u64) -> ModelUsage {
        ModelUsage {
            model: model.map(str::to_owned),
            usage: Usage { input_tokens: input, ..Usage::default() },
        }
    }

    /// The rows as the store would give them: (frame, model, input tokens), sorted by frame.
    fn listed(rows: &UsageRows) -> Vec<(String, Option<String>, u64)> {
        rows.expanded(&rows.rows)
            .map(|(frame, row)| (frame.as_str().to_owned(), row.model, row.usage.input_tokens))
            .collect()
    }

    fn row(frame: &str, model: Option<&str>, input: u64) -> (String, Option<String>, u64) {
        (frame.to_owned(), model.map(str::to_owned), input)
    }

    #[test]
    fn rows_are_kept_by_frame_in_the_stores_order_with_each_model_named_once() {
        let rows = UsageRows::new(vec![
            (id("f0000000002"), usage(Some("b"), 1)),
            (id("f0000000001"), usage(Some("a"), 2)),
            (id("f0000000001"), usage(Some("b"), 3)),
            (id("f0000000001"), usage(None, 4)),
        ]);
        assert_eq!(
            listed(&rows),
            [
                row("f0000000001", Some("a"), 2),
                row("f0000000001", Some("b"), 3),
                row("f0000000001", None, 4),
                row("f0000000002", Some("b"), 1),
            ]
        );
        assert_eq!(rows.models.len(), 3, "{:?}", rows.models);
        assert_eq!(rows.of(&id("f0000000001")).len(), 3);
        assert_eq!(rows.of(&id("f0000000002")).len(), 1);
        assert!(rows.of(&id("f0000000000")).is_empty());
        assert!(rows.of(&id("f0000000003")).is_empty());
    }

    #[test]
    fn replacing_a_frames_rows_leaves_the_others_and_drops_a_frame_with_none() {
        let mut rows = UsageRows::new(vec![
            (id("f0000000001"), usage(Some("a"), 1)),
            (id("f0000000002"), usage(Some("a"), 2)),
            (id("f0000000003"), usage(Some("a"), 3)),
        ]);
        rows.replace(vec![
            (id("f0000000003"), vec![usage(Some("a"), 30), usage(Some("c"), 31)]),
            (id("f0000000002"), vec![]),
            (id("f0000000000"), vec![usage(None, 5)]),
        ]);
        assert_eq!(
            listed(&rows),
            [
                row("f0000000000", None, 5),
                row("f0000000001", Some("a"), 1),
                row("f0000000003", Some("a"), 30),
                row("f0000000003", Some("c"), 31),
            ]
        );
    }

    #[test]
    fn the_outline_prices_each_frames_own_rows_and_the_focus_subtree() {
        let frames = [
            outline_frame("f0000000001", None),
            outline_frame("f0000000002", Some("f0000000001")),
            outline_frame("f0000000003", Some("f0000000002")),
        ];
        let raw = vec![
            (id("f0000000001"), usage(Some("claude-sonnet-4-5"), 1_000_000)),
            (id("f0000000002"), usage(Some("claude-sonnet-4-5"), 2_000_000)),
            (id("f0000000002"), usage(Some("a-model-nobody-prices"), 7)),
            (id("f0000000003"), usage(Some("claude-sonnet-4-5"), 4_000_000)),
        ];
        let prices = PriceTable::default();
        let costs =
            priced_for_outline(&UsageRows::new(raw.clone()), &frames, &id("f0000000002"), &prices);
        // The same as every frame's whole cost worked out by the model from the rows as stored.
        let parents: Vec<(FrameId, Option<FrameId>)> =
            frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
        let whole = frame_costs(&parents, raw.iter().map(|(f, r)| (f, r)), &prices);
        assert_eq!(costs.focus.as_ref(), whole.get(&id("f0000000002")));
        let own: HashMap<FrameId, u64> = whole
            .iter()
            .filter(|(_, c)| c.own.micro_usd > 0)
            .map(|(f, c)| (f.clone(), c.own.micro_usd))
            .collect();
        assert_eq!(costs.own, own);
        assert_eq!(costs.own.len(), 3, "every frame's own replies are priced: {:?}", costs.own);
    }

    #[test]
    fn each_frames_cost_from_the_kept_shape_is_its_cost_worked_out_with_the_whole_tree() {
        // A root with two children, one with a child of its own, and a frame whose parent is
        // not in the tree (which the store's invariants forbid): no one's child.
        let frames = [
            outline_frame("f0000000004", Some("f0000000002")),
            outline_frame("f0000000001", None),
            outline_frame("f0000000003", Some("f0000000001")),
            outline_frame("f0000000002", Some("f0000000001")),
            outline_frame("f0000000005", Some("f000000000z")),
        ];
        let raw = vec![
            (id("f0000000001"), usage(Some("claude-sonnet-4-5"), 1_000_000)),
            (id("f0000000002"), usage(Some("gpt-4o"), 2_000_000)),
            (id("f0000000004"), usage(Some("claude-sonnet-4-5"), 4_000_000)),
            (id("f0000000004"), usage(Some("a-model-nobody-prices"), 7)),
            (id("f0000000005"), usage(None, 9)),
        ];
        let prices = PriceTable::default();
        let shape = TreeShape::new(&frames);
        let parents: Vec<(FrameId, Option<FrameId>)> =
            frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
        let whole = frame_costs(&parents, raw.iter().map(|(f, r)| (f, r)), &prices);
        let rows = UsageRows::new(raw);
        let mut pricing = RowPricing::new(&rows, &prices);
        for f in &frames {
            let subtree = shape.subtree(&f.id);
            assert!(subtree.contains(&&f.id));
            let cost = subtree_cost(&rows, &mut pricing, &f.id, &subtree, &prices);
            assert_eq!(cost.as_ref(), whole.get(&f.id), "{}", f.id);
        }
        let root: Vec<&str> =
            shape.subtree(&id("f0000000001")).into_iter().map(FrameId::as_str).collect();
        assert_eq!(root, ["f0000000001", "f0000000002", "f0000000003", "f0000000004"]);
        assert!(shape.subtree(&id("f0000000009")).is_empty());
    }

    #[test]
    fn small_and_large_subtrees_find_their_rows_alike() {
        // A binary tree of 200 frames, every frame with usage of one or two models: a leaf's
        // rows are found by a search, the root's in one pass.
        let names: Vec<String> = (0..200).map(|i| format!("f{i:010}")).collect();
        let frames: Vec<FrameOutline> = (0..names.len())
            .map(|i| outline_frame(&names[i], (i > 0).then(|| names[(i - 1) / 2].as_str())))
            .collect();
        let mut raw = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            raw.push((f.id.clone(), usage(Some("claude-sonnet-4-5"), 1_000 * i as u64 + 1)));
            if i % 3 == 0 {
                raw.push((f.id.clone(), usage(Some("gpt-4o"), 7)));
            }
        }
        let prices = PriceTable::default();
        let parents: Vec<(FrameId, Option<FrameId>)> =
            frames.iter().map(|f| (f.id.clone(), f.parent.clone())).collect();
        let whole = frame_costs(&parents, raw.iter().map(|(f, r)| (f, r)), &prices);
        let rows = UsageRows::new(raw);
        let shape = TreeShape::new(&frames);
        let mut pricing = RowPricing::new(&rows, &prices);
        for f in &frames {
            let subtree = shape.subtree(&f.id);
            let cost = subtree_cost(&rows, &mut pricing, &f.id, &subtree, &prices);
            assert_eq!(cost.as_ref(), whole.get(&f.id), "{}", f.id);
        }
        assert_eq!(shape.subtree(&frames[0].id).len(), 200);
    }
}
