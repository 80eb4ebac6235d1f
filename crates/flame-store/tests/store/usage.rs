//! The usage aggregate frame costs are computed from: one query per tree, by frame and model.

use flame_model::cost::ModelUsage;
use flame_model::{Actor, FrameId, IdSource, NewMessage, Role, Usage};
use flame_store::{Change, ReplyOwner, Store};

const WRITER: ReplyOwner = ReplyOwner { pid: 4242, started: Some(1) };

fn change(at: i64) -> Change {
    Change { actor: Actor::Person, at }
}

fn reply(model: Option<&str>, usage: Usage) -> NewMessage {
    let mut m = NewMessage::text(Role::Assistant, "done");
    m.model = model.map(str::to_owned);
    m.usage = Some(usage);
    m
}

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        ..Usage::default()
    }
}

#[test]
fn usage_is_added_up_by_frame_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(3);
    let (tree, root, child, quiet) =
        (ids.tree_id(), ids.frame_id(), ids.frame_id(), ids.frame_id());
    store.create_tree(change(1), &tree, &root, "Build", "It works", None).unwrap();
    store.push(change(2), &child, &root, "Parser", "Parses").unwrap();
    store.push(change(3), &quiet, &child, "Lexer", "Lexes").unwrap();
    let sonnet = Some("claude-sonnet-4-5");
    store.add_message(change(4), &root, &reply(sonnet, usage(10, 1, 100, 1000)), 1).unwrap();
    store.add_message(change(5), &root, &reply(sonnet, usage(20, 2, 200, 2000)), 1).unwrap();
    store.add_message(change(6), &root, &reply(Some("gpt-4o"), usage(7, 7, 0, 0)), 1).unwrap();
    store.add_message(change(7), &root, &NewMessage::text(Role::User, "no usage"), 1).unwrap();
    store.add_message(change(8), &child, &reply(None, usage(5, 5, 0, 0)), 1).unwrap();
    // A count past 2^32 (no provider reports one) adds 2^32, so no sum overflows, and still
    // reads back exactly. The shapes earlier versions stored are read by migration 13 (see its
    // test in `migrations.rs`).
    let haiku = Some("claude-haiku-4-5");
    store.add_message(change(9), &child, &reply(haiku, usage(1, 2, 3, 4)), 1).unwrap();
    let huge = usage(0, 0, 1 << 33, 0);
    let m = store.add_message(change(10), &child, &reply(haiku, huge), 1).unwrap();
    assert_eq!(store.messages_by_id(&[m.id]).unwrap()[0].usage, Some(huge));
    // Every message reads back the usage it was written with, none when it had none.
    let written: Vec<Option<Usage>> =
        store.messages(&root).unwrap().into_iter().map(|m| m.usage).collect();
    assert_eq!(
        written,
        [
            Some(usage(10, 1, 100, 1000)),
            Some(usage(20, 2, 200, 2000)),
            Some(usage(7, 7, 0, 0)),
            None
        ]
    );
    // A streamed reply counts the usage it is finished with.
    let streamed = store.begin_reply(change(11), &child, haiku, WRITER).unwrap();
    let finished = store.finish_reply(change(12), streamed, &reply(haiku, usage(2, 2, 2, 2)), 1);
    assert_eq!(finished.unwrap().usage, Some(usage(2, 2, 2, 2)));
    // Another tree's usage is not this tree's.
    let (other, other_root) = (ids.tree_id(), ids.frame_id());
    store.create_tree(change(20), &other, &other_root, "Other", "Other", None).unwrap();
    store.add_message(change(21), &other_root, &reply(sonnet, usage(9, 9, 9, 9)), 1).unwrap();

    let mut rows = store.usage_by_frame_and_model(&tree).unwrap();
    rows.sort_by(|a, b| (a.0.as_str(), &a.1.model).cmp(&(b.0.as_str(), &b.1.model)));
    let row = |frame: &FrameId, model: Option<&str>, u: Usage| {
        (frame.clone(), ModelUsage { model: model.map(str::to_owned), usage: u })
    };
    let mut expected = vec![
        row(&root, Some("claude-sonnet-4-5"), usage(30, 3, 300, 3000)),
        row(&root, Some("gpt-4o"), usage(7, 7, 0, 0)),
        row(&child, None, usage(5, 5, 0, 0)),
        row(&child, Some("claude-haiku-4-5"), usage(3, 4, 5 + (1 << 32), 6)),
    ];
    expected.sort_by(|a, b| (a.0.as_str(), &a.1.model).cmp(&(b.0.as_str(), &b.1.model)));
    assert_eq!(rows, expected);
    assert!(rows.iter().all(|(frame, _)| frame != &quiet), "a frame without usage has no row");
    // One frame's, read alone, is its share of the tree's.
    let mut child_rows = store.usage_by_model(&child).unwrap();
    child_rows.sort_by(|a, b| a.model.cmp(&b.model));
    let of_child: Vec<ModelUsage> =
        expected.into_iter().filter(|(f, _)| f == &child).map(|(_, u)| u).collect();
    assert_eq!(child_rows, of_child);
    assert!(store.usage_by_model(&quiet).unwrap().is_empty());
}
