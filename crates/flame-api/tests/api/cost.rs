//! Frame and subtree costs through the facade: the usage each reply recorded, priced by its
//! model with the prices the front end set, in the outline, for one frame, and in the exports.

use flame_api::{ExportFormat, ExportScope, Flame, FlameConfig, ImportFormat};
use flame_model::cost::{Completeness, ModelPrice, PriceTable};
use flame_model::{Actor, FrameId, NewMessage, Role, Usage};
use serde_json::Value;

use crate::Scratch;

const A: Actor = Actor::Agent;

fn reply(model: &str, input: u64, output: u64, cache_read: u64, cache_write: u64) -> NewMessage {
    let mut m = NewMessage::text(Role::Assistant, "done");
    m.model = Some(model.to_owned());
    m.usage = Some(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        ..Usage::default()
    });
    m
}

/// Root (Sonnet: 1M in) > Parser (Haiku: 1M out; a local model: 500 tokens) > Lexer (Sonnet:
/// 1M cache reads, 1M cache writes); and Docs under the root, with no usage.
fn priced_tree(s: &Scratch) -> [FrameId; 4] {
    let tree = s.flame.create_tree(A, "Build", "It works", None).unwrap();
    let root = tree.root;
    s.flame
        .add_message(A, &root, &reply("claude-sonnet-4-5-20250929", 1_000_000, 0, 0, 0))
        .unwrap();
    let parser = s.flame.push(A, None, "Parser", "Parses").unwrap().id;
    s.flame.add_message(A, &parser, &reply("claude-haiku-4-5", 0, 1_000_000, 0, 0)).unwrap();
    s.flame.add_message(A, &parser, &reply("llama3.1:8b", 400, 100, 0, 0)).unwrap();
    let lexer = s.flame.push(A, None, "Lexer", "Lexes").unwrap().id;
    s.flame
        .add_message(A, &lexer, &reply("claude-sonnet-4-5", 0, 0, 1_000_000, 1_000_000))
        .unwrap();
    let docs = s.flame.push(A, Some(&root), "Docs", "Documented").unwrap().id;
    s.flame.append(A, &docs, Role::User, "no model called here").unwrap();
    [root, parser, lexer, docs]
}

#[test]
fn a_subtree_costs_its_own_replies_and_its_descendants() {
    let s = Scratch::new(61);
    let [root, parser, lexer, docs] = priced_tree(&s);
    let costs = s.flame.tree_costs(None).unwrap();
    // Lexer: 1M cache reads at $0.30 + 1M cache writes at $3.75.
    let l = &costs[&lexer];
    assert_eq!((l.own.micro_usd, l.subtree.micro_usd), (4_050_000, 4_050_000));
    assert_eq!(l.own.completeness, Completeness::Complete);
    // Parser: 1M Haiku output at $5, and the local model's 500 tokens at no known price.
    let p = &costs[&parser];
    assert_eq!((p.own.micro_usd, p.subtree.micro_usd), (5_000_000, 9_050_000));
    assert_eq!(p.own.completeness, Completeness::Partial);
    assert_eq!(p.own.unpriced_models, ["llama3.1:8b"]);
    assert_eq!(p.own.unpriced_usage.input_tokens, 400);
    // Root: a dated Sonnet snapshot at Sonnet's $3 per million input tokens, plus all below.
    let r = &costs[&root];
    assert_eq!((r.own.micro_usd, r.subtree.micro_usd), (3_000_000, 12_050_000));
    assert_eq!(r.own.completeness, Completeness::Complete);
    assert_eq!(r.subtree.completeness, Completeness::Partial);
    assert!(!costs.contains_key(&docs), "no usage below Docs");
    assert_eq!(s.flame.frame_cost(&parser).unwrap(), costs[&parser]);
    assert_eq!(s.flame.frame_cost(&docs).unwrap().own.completeness, Completeness::None);
    // The outline the graph draws carries each frame's own priced cost, for the frames that
    // have one.
    let own: std::collections::HashMap<_, _> =
        [(root.clone(), 3_000_000), (parser.clone(), 5_000_000), (lexer.clone(), 4_050_000)]
            .into_iter()
            .collect();
    let outline = s.flame.outline(None).unwrap();
    assert_eq!(outline.own_costs, own);
    // And the focused frame's whole cost.
    assert_eq!(outline.tree.focus, docs);
    assert_eq!(outline.focus_cost, None, "nothing recorded in Docs");
    // After a change the outline works them out without every frame's whole cost (the focus's
    // subtree alone): the same.
    s.flame.focus(A, &parser).unwrap();
    let outline = s.flame.outline(None).unwrap();
    assert_eq!(outline.focus_cost.as_ref(), Some(&costs[&parser]));
    assert_eq!(outline.own_costs, own);
    s.flame.focus(A, &root).unwrap();
    assert_eq!(s.flame.outline(None).unwrap().focus_cost.as_ref(), Some(&costs[&root]));
    // Read again with nothing changed, a frame's cost is the same (now from what was kept).
    assert_eq!(s.flame.frame_cost(&root).unwrap(), costs[&root]);
}

#[test]
fn the_prices_the_front_end_sets_replace_the_built_in_ones() {
    let s = Scratch::new(62);
    let [root, parser, ..] = priced_tree(&s);
    let local = ModelPrice {
        model: "llama3.1:8b".to_owned(),
        input: 1_000_000,
        output: 2_000_000,
        cache_read: 0,
        cache_write: 0,
        cache_write_long: None,
        as_of: "2026-11".to_owned(),
    };
    let dearer_haiku =
        ModelPrice { model: "claude-haiku-4-5".to_owned(), output: 6_000_000, ..local.clone() };
    let prices = PriceTable::with_overrides(&[local, dearer_haiku]);
    s.flame.reconfigure(FlameConfig { prices, ..FlameConfig::default() });
    let costs = s.flame.tree_costs(None).unwrap();
    // 1M Haiku output at $6 + 400 in at $1 + 100 out at $2 (0.0004 + 0.0002 dollars).
    assert_eq!(costs[&parser].own.micro_usd, 6_000_600);
    assert_eq!(costs[&parser].own.completeness, Completeness::Complete);
    assert_eq!(costs[&root].subtree.completeness, Completeness::Complete);
    assert_eq!(costs[&root].subtree.micro_usd, 13_050_600);
}

#[test]
fn exports_carry_each_frames_cost_and_read_back_without_it() {
    let s = Scratch::new(63);
    let [root, parser, ..] = priced_tree(&s);
    let text = s.flame.export_text(root.as_str(), ExportScope::Tree, ExportFormat::Json).unwrap();
    let export: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(export["version"], 2);
    let frames = export["frames"].as_array().unwrap();
    assert_eq!(frames[0]["cost"]["subtree"]["micro_usd"], 12_050_000);
    assert_eq!(frames[0]["cost"]["own"]["completeness"], "complete");
    let docs = frames.iter().find(|f| f["title"] == "Docs").unwrap();
    assert!(docs.get("cost").is_none(), "a frame with nothing recorded has no cost");
    // A frame exported alone stands alone: its subtree is itself.
    let alone =
        s.flame.export_text(parser.as_str(), ExportScope::Frame, ExportFormat::Json).unwrap();
    let alone: Value = serde_json::from_str(&alone).unwrap();
    assert_eq!(alone["frames"][0]["cost"]["subtree"]["micro_usd"], 5_000_000);

    let markdown =
        s.flame.export_text(root.as_str(), ExportScope::Tree, ExportFormat::Markdown).unwrap();
    assert!(
        markdown.contains(
            "- cost: $3.00; with its subtree $12.05 + 500 tokens of llama3.1:8b at an unknown price"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("- cost: $5.00 + 500 tokens of llama3.1:8b at an unknown price; with its subtree $9.05 + 500 tokens of llama3.1:8b at an unknown price"), "{markdown}");

    // The file imports back; the new tree's costs come from its messages, the same again.
    let before = s.flame.tree_costs(None).unwrap().remove(&root).unwrap();
    let file = s.dir.path().join("tree.json");
    std::fs::write(&file, &text).unwrap();
    let imported = s
        .flame
        .import_file(Actor::Person, &file, Some(ImportFormat::Flame), false, None, &mut |_| {})
        .unwrap();
    let again = s.flame.tree_costs(Some(&imported.tree.id)).unwrap();
    assert_eq!(again[&imported.tree.root], before);
}

#[test]
fn costs_follow_every_reply_whoever_writes_it() {
    let s = Scratch::new(64);
    let [root, parser, lexer, _] = priced_tree(&s);
    let before = s.flame.tree_costs(None).unwrap();
    assert_eq!(before[&root].subtree.micro_usd, 12_050_000);
    // A reply in this process, and one another process writes to the same data directory.
    s.flame.add_message(A, &lexer, &reply("claude-sonnet-4-5", 1_000_000, 0, 0, 0)).unwrap();
    let other = s.reopen(65);
    other.add_message(A, &parser, &reply("gpt-4o", 0, 1_000_000, 0, 0)).unwrap();
    let after = s.flame.tree_costs(None).unwrap();
    assert_eq!(after[&lexer].own.micro_usd, 4_050_000 + 3_000_000);
    assert_eq!(after[&parser].own.micro_usd, 5_000_000 + 10_000_000);
    assert_eq!(after[&root].subtree.micro_usd, 12_050_000 + 13_000_000);
    // Another tree read in between leaves nothing of its own behind.
    let second = s.flame.create_tree(A, "Other", "Other", None).unwrap();
    assert!(s.flame.tree_costs(None).unwrap().is_empty());
    s.flame.add_message(A, &second.root, &reply("gpt-4o", 1_000_000, 0, 0, 0)).unwrap();
    assert_eq!(s.flame.tree_costs(None).unwrap()[&second.root].own.micro_usd, 2_500_000);
    let first = s.flame.frame(&root).unwrap().frame.tree;
    assert_eq!(s.flame.tree_costs(Some(&first)).unwrap(), after);
    // Read whole by a Flame that never kept it, the costs are the same.
    assert_eq!(s.reopen(66).tree_costs(Some(&first)).unwrap(), after);
}

#[test]
fn the_outline_read_ahead_gives_the_outline_the_same_costs_and_follows_changes_made_after_it() {
    let s = Scratch::new(67);
    let [root, parser, lexer, _] = priced_tree(&s);
    s.flame.focus(A, &parser).unwrap();
    let unread = s.reopen(68).outline(None).unwrap();
    // The window's start: the outline (and its usage) read ahead, then the outline read again.
    let ahead = s.reopen(69);
    ahead.read_outline_ahead().unwrap();
    let outline = ahead.outline(None).unwrap();
    assert_eq!(outline.own_costs, unread.own_costs);
    assert_eq!(outline.focus_cost, unread.focus_cost);
    assert_eq!(outline.focus_cost.as_ref().map(|c| c.subtree.micro_usd), Some(9_050_000));
    // A reply written after the read ahead, by another process, is in the next outline.
    let other = s.reopen(70);
    other.read_outline_ahead().unwrap();
    s.flame.add_message(A, &lexer, &reply("claude-sonnet-4-5", 1_000_000, 0, 0, 0)).unwrap();
    let outline = other.outline(None).unwrap();
    assert_eq!(outline.own_costs[&lexer], 4_050_000 + 3_000_000);
    assert_eq!(outline.own_costs[&root], 3_000_000);
    assert_eq!(outline.focus_cost.map(|c| c.subtree.micro_usd), Some(9_050_000 + 3_000_000));
}

/// The outline read while the window starts goes to its first ask, once, and only while nothing
/// was recorded since and the prices are those it was read at. A title changed in the database
/// without an event (which nothing in Flame does) tells the outline read ahead from one read
/// afresh.
#[test]
fn the_outline_read_ahead_goes_to_the_first_ask_unless_something_changed() {
    let s = Scratch::new(72);
    let [_, parser, lexer, _] = priced_tree(&s);
    s.flame.focus(A, &parser).unwrap();
    let json = |flame: &Flame| serde_json::to_value(flame.outline_columns(None).unwrap()).unwrap();
    let rename = |title: &str| {
        let db = s.dir.path().join("flame.db");
        flame_store::synthetic::retitle_without_event(&db, &lexer, title).unwrap();
    };
    let title = |outline: &Value| {
        let index = outline["id"].as_array().unwrap().iter().position(|id| id == lexer.as_str());
        outline["title"][index.unwrap()].as_str().unwrap().to_owned()
    };

    let ahead = s.reopen(73);
    ahead.read_outline_ahead().unwrap();
    rename("Renamed behind its back");
    let first = json(&ahead);
    assert_eq!(title(&first), "Lexer");
    assert_eq!(title(&json(&ahead)), "Renamed behind its back");
    assert_eq!(first["own_costs"], json(&s.reopen(74))["own_costs"]);

    // A reply recorded after the read ahead: the first ask reads afresh.
    let stale = s.reopen(75);
    stale.read_outline_ahead().unwrap();
    s.flame.add_message(A, &lexer, &reply("claude-sonnet-4-5", 1_000_000, 0, 0, 0)).unwrap();
    assert_eq!(json(&stale), json(&s.reopen(76)));

    // New prices, which no event records: the first ask reads afresh at them.
    let repriced = s.reopen(77);
    repriced.read_outline_ahead().unwrap();
    let free = ["claude-sonnet-4-5", "claude-haiku-4-5"].map(|model| ModelPrice {
        model: model.to_owned(),
        input: 0,
        output: 0,
        cache_read: 0,
        cache_write: 0,
        cache_write_long: None,
        as_of: "2026-11".to_owned(),
    });
    let prices = PriceTable::with_overrides(&free);
    repriced.reconfigure(FlameConfig { prices, ..FlameConfig::default() });
    assert_ne!(first["own_costs"], Value::Array(Vec::new()));
    assert_eq!(json(&repriced)["own_costs"], Value::Array(Vec::new()));
}

#[test]
fn reading_the_outline_ahead_without_a_current_tree_reads_nothing() {
    let s = Scratch::new(71);
    s.flame.read_outline_ahead().unwrap();
    // Nothing was kept for the first ask: it says there is no tree, as it would without the read.
    let err = s.flame.outline_columns(None).unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::NotFound, "{err:?}");
    // The tree made next is read as it is, not as anything read before it.
    let tree = s.flame.create_tree(Actor::Cli, "Made after the read", "Done", None).unwrap();
    let outline = serde_json::to_value(s.flame.outline_columns(None).unwrap()).unwrap();
    assert_eq!(outline["title"][0], "Made after the read");
    assert_eq!(outline["tree"]["id"], tree.id.as_str());
}

/// A tree of `PREVIEW_FROM_FRAMES` frames gets a preview from the read ahead, once: its top
/// levels, each frame as the whole outline has it, with what is under them folded in; a small
/// tree gets none.
#[test]
fn a_large_tree_s_read_ahead_makes_a_preview_of_its_top_levels_for_the_first_ask() {
    let s = Scratch::new(78);
    let (tree, frames, messages) =
        flame_store::synthetic::tree(flame_api::PREVIEW_FROM_FRAMES, 1_000);
    {
        let mut store = flame_store::Store::open(&s.dir.path().join("flame.db")).unwrap();
        let change = flame_store::Change { actor: A, at: 1 };
        store.import_tree(change, &tree, &frames, &messages).unwrap();
    }
    let flame = s.reopen(79);
    assert_eq!(flame.outline_preview(), None, "nothing was read ahead");
    flame.read_outline_ahead().unwrap();
    let preview = flame.outline_preview().unwrap();
    assert_eq!(flame.outline_preview(), None, "the preview goes to one ask");
    let whole = flame.outline_columns(None).unwrap();
    assert_eq!(preview.whole_frames as usize, whole.id.len());
    let kept = preview.columns.id.len();
    assert!(kept <= flame_api::PREVIEW_MAX_FRAMES && kept > 1, "{kept} frames");
    // Every frame is in the preview or folded into one of its frames, once.
    let folded: u32 = preview.folded.frames.iter().sum();
    assert_eq!(kept + folded as usize, whole.id.len());
    let tokens = |columns: &flame_api::OutlineColumns| columns.tokens.iter().sum::<u64>();
    let folded_tokens: u64 = preview.folded.tokens.iter().sum();
    assert_eq!(tokens(&preview.columns) + folded_tokens, tokens(&whole));
    // Each frame of the preview is the whole outline's, title and all.
    let at: std::collections::HashMap<_, _> = whole.id.iter().zip(0..).collect();
    for (k, id) in preview.columns.id.iter().enumerate() {
        assert_eq!(preview.columns.title[k], whole.title[at[id]]);
    }
    assert_eq!(preview.columns.tree, whole.tree);

    // A small tree's read ahead makes none.
    let small = Scratch::new(80);
    priced_tree(&small);
    small.flame.read_outline_ahead().unwrap();
    assert_eq!(small.flame.outline_preview(), None);
}
