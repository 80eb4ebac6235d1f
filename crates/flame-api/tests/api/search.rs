//! Search through the facade: each hit with its tree's title and the path of titles from the
//! root to its frame, the tree filter, and refusals with their codes.

use flame_api::{ErrorCode, MAX_SEARCH_QUERY_CHARS, SearchPlace};
use flame_model::{Actor, Role, TreeId};

use crate::Scratch;
use crate::frames::completed;

const A: Actor = Actor::Person;

#[test]
fn hits_carry_their_tree_title_and_the_path_from_the_root() {
    let s = Scratch::new(18);
    let tree = s.flame.create_tree(A, "Build the app", "It works", None).unwrap();
    let design = s.flame.push(A, None, "Design", "a design").unwrap();
    let cache = s.flame.push(A, None, "Pick the cache", "one is picked").unwrap();
    let said = s.flame.append(A, &cache.id, Role::User, "Use an LRU eviction policy").unwrap();
    s.flame.pop(A, None, &completed("LRU eviction chosen")).unwrap();
    let other = s.flame.create_tree(A, "Another tree", "c", None).unwrap();
    s.flame.append(A, &other.root, Role::Assistant, "eviction elsewhere").unwrap();

    let hits = s.flame.search("eviction", Some(&tree.id), None).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    let path = ["Build the app", "Design", "Pick the cache"];
    // The frame's results come before its messages.
    assert_eq!(hits[0].place, SearchPlace::Results);
    assert_eq!(hits[1].place, SearchPlace::Message { id: said.id, role: Role::User });
    for hit in &hits {
        assert_eq!((&hit.tree, hit.tree_title.as_str()), (&tree.id, "Build the app"));
        assert_eq!(hit.frame, cache.id);
        assert_eq!(hit.path, path);
    }
    let highlighted: Vec<&str> =
        hits[1].snippet.iter().filter(|p| p.matched).map(|p| p.text.as_str()).collect();
    assert_eq!(highlighted, ["eviction"]);
    assert_ne!(design.id, cache.id);

    // Across every tree, the other tree's message is found too, with its own title and path.
    let everywhere = s.flame.search("eviction", None, None).unwrap();
    assert_eq!(everywhere.len(), 3);
    let elsewhere = everywhere.iter().find(|h| h.tree == other.id).unwrap();
    assert_eq!(
        (elsewhere.tree_title.as_str(), elsewhere.path.as_slice()),
        ("Another tree", &["Another tree".to_owned()][..])
    );
    assert_eq!(s.flame.search("eviction", None, Some(1)).unwrap().len(), 1);

    // The hits cross to the front ends as JSON with the place tagged by kind.
    let json = serde_json::to_value(&hits[1]).unwrap();
    assert_eq!(json["place"]["kind"], "message");
    assert_eq!(json["snippet"][0]["matched"], false);
}

#[test]
fn refusals_have_codes_the_front_ends_show() {
    let s = Scratch::new(19);
    s.flame.create_tree(A, "Root", "r", None).unwrap();
    let err = s.flame.search(&"x".repeat(MAX_SEARCH_QUERY_CHARS + 1), None, None).unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert!(err.message.contains("at most 500 characters"), "{}", err.message);
    let unknown = TreeId::from_trusted("t0000000000".into());
    assert_eq!(s.flame.search("root", Some(&unknown), None).unwrap_err().code, ErrorCode::NotFound);
    assert!(s.flame.search("\" NEAR( *", None, None).unwrap().is_empty());
}
