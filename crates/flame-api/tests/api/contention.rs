//! Several writers on one data directory at once — as the app, the command line and MCP
//! servers are — lose nothing: every operation lands whole, and the tree stays valid.

use std::sync::{Arc, Barrier};

use flame_model::{Actor, FrameTree, Role};

use crate::{Scratch, home};

#[test]
fn concurrent_writers_lose_nothing() {
    let s = Scratch::new(31);
    let tree = s.flame.create_tree(Actor::Person, "Shared", "many writers", None).unwrap();
    const WRITERS: usize = 4;
    const EACH: usize = 25;
    let start = Arc::new(Barrier::new(WRITERS));
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (path, root, start) =
                (s.dir.path().to_path_buf(), tree.root.clone(), start.clone());
            std::thread::spawn(move || {
                // Each writer has its own connection, as a separate process would.
                let flame = flame_api::Flame::open_with(
                    home(&path),
                    flame_api::FlameConfig::default(),
                    flame_api::Env::fixed(1_795_400_000_000, 100 + w as u64),
                )
                .unwrap();
                start.wait();
                for i in 0..EACH {
                    let child = flame
                        .push(Actor::Agent, Some(&root), &format!("writer {w} frame {i}"), "c")
                        .unwrap();
                    flame
                        .append(
                            Actor::Agent,
                            &child.id,
                            Role::Assistant,
                            &format!("writer {w} message {i}"),
                        )
                        .unwrap();
                    flame
                        .pop(
                            Actor::Agent,
                            Some(&child.id),
                            &flame_api::PopRequest {
                                status: flame_model::lifecycle::PopStatus::Completed,
                                results: Some(format!("done {w}/{i}")),
                                results_compacted: None,
                                artifacts: vec![],
                                decisions: vec![],
                                reason: None,
                            },
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a writer failed");
    }
    let status = s.flame.status(None).unwrap();
    assert_eq!(status.frames.len(), 1 + WRITERS * EACH);
    let whole = FrameTree::new(
        status.tree.clone(),
        status.frames.iter().map(|e| e.frame.clone()).collect(),
    );
    whole.check_invariants().unwrap();
    for entry in &status.frames[1..] {
        assert_eq!(entry.frame.message_count, 1, "{} lost its message", entry.frame.id);
        let log = s.flame.log(&entry.frame.id).unwrap();
        assert!(log.contains("popped as completed"), "{}", entry.frame.id);
    }
}
