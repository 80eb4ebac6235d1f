//! A whole tree in memory, for drawing it and for checking what must always hold.

use std::collections::HashMap;

use crate::{Frame, FrameId, Status, Tree};

/// The frames of one tree, indexed by id and by parent.
#[derive(Debug, Clone)]
pub struct FrameTree {
    pub tree: Tree,
    frames: Vec<Frame>,
    index: HashMap<FrameId, usize>,
    /// Parent → its children's indexes, in position order.
    children: HashMap<FrameId, Vec<usize>>,
}

impl FrameTree {
    /// Indexes `frames`, which must all belong to `tree`.
    pub fn new(tree: Tree, frames: Vec<Frame>) -> FrameTree {
        let index = frames.iter().enumerate().map(|(i, f)| (f.id.clone(), i)).collect();
        let mut children: HashMap<FrameId, Vec<usize>> = HashMap::new();
        for (i, frame) in frames.iter().enumerate() {
            if let Some(parent) = &frame.parent {
                children.entry(parent.clone()).or_default().push(i);
            }
        }
        for list in children.values_mut() {
            list.sort_by_key(|&i| frames[i].position);
        }
        FrameTree { tree, frames, index, children }
    }

    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    pub fn get(&self, id: &FrameId) -> Option<&Frame> {
        self.index.get(id).map(|&i| &self.frames[i])
    }

    pub fn root(&self) -> Option<&Frame> {
        self.get(&self.tree.root)
    }

    /// `id`'s children in position order.
    pub fn children(&self, id: &FrameId) -> impl Iterator<Item = &Frame> {
        self.children.get(id).into_iter().flatten().map(|&i| &self.frames[i])
    }

    /// The frames from the root down to `id`, both included.
    pub fn path_to(&self, id: &FrameId) -> Vec<&Frame> {
        let mut path = Vec::new();
        let mut next = self.get(id);
        while let Some(frame) = next {
            path.push(frame);
            if path.len() > self.frames.len() {
                break; // A cycle; `check_invariants` reports it.
            }
            next = frame.parent.as_ref().and_then(|p| self.get(p));
        }
        path.reverse();
        path
    }

    /// The first frame, in order, whose parents do not lead to the tree's root (a cycle or a
    /// missing parent). Each frame is walked up only until a frame already known to reach the
    /// root, so a deep tree costs one step per frame rather than one per frame and ancestor
    /// (3% of importing 100k frames, before).
    fn first_cut_off(&self) -> Option<&Frame> {
        let mut reaches = vec![false; self.frames.len()];
        if let Some(&root) = self.index.get(&self.tree.root) {
            reaches[root] = true;
        }
        let mut walked = Vec::new();
        for (start, frame) in self.frames.iter().enumerate() {
            walked.clear();
            let mut at = start;
            while !reaches[at] {
                // More steps than frames is a cycle.
                if walked.len() > self.frames.len() {
                    return Some(frame);
                }
                walked.push(at);
                match self.frames[at].parent.as_ref().and_then(|p| self.index.get(p)) {
                    Some(&parent) => at = parent,
                    None => return Some(frame),
                }
            }
            for &known in &walked {
                reaches[known] = true;
            }
        }
        None
    }

    /// Checks every structural rule of a tree, returning the first one broken:
    /// one root, which is the tree's; parents in the tree; no cycles; dense positions; every
    /// `in_progress` frame under an `in_progress` parent; nothing open under an invalidated
    /// frame; a retry beside the failed (or since invalidated) frame it retries; the focus on a frame of the tree.
    pub fn check_invariants(&self) -> Result<(), String> {
        let roots: Vec<_> = self.frames.iter().filter(|f| f.parent.is_none()).collect();
        if roots.len() != 1 || roots[0].id != self.tree.root {
            let ids: Vec<_> = roots.iter().map(|f| f.id.as_str()).collect();
            return Err(format!(
                "tree {} has roots {ids:?}, expected [{}]",
                self.tree.id, self.tree.root
            ));
        }
        if self.get(&self.tree.focus).is_none() {
            return Err(format!(
                "the focus {} is not a frame of tree {}",
                self.tree.focus, self.tree.id
            ));
        }
        if let Some(frame) = self.first_cut_off() {
            return Err(format!(
                "{} does not reach the root (a cycle or a missing parent)",
                frame.id
            ));
        }
        for frame in &self.frames {
            if frame.tree != self.tree.id {
                return Err(format!(
                    "{} belongs to tree {}, not {}",
                    frame.id, frame.tree, self.tree.id
                ));
            }
            if let Some(parent) = frame.parent.as_ref().and_then(|p| self.get(p)) {
                if frame.status == Status::InProgress && parent.status != Status::InProgress {
                    return Err(format!(
                        "{} is in_progress under {} which is {}",
                        frame.id, parent.id, parent.status
                    ));
                }
                if parent.status == Status::Invalidated
                    && crate::lifecycle::invalidation_reaches(frame.status)
                {
                    return Err(format!(
                        "{} is {} under the invalidated {}",
                        frame.id, frame.status, parent.id
                    ));
                }
            }
            if let Some(original) = &frame.retry_of {
                match self.get(original) {
                    // The failed attempt may since have been invalidated, which DESIGN allows.
                    Some(o)
                        if matches!(o.status, Status::Failed | Status::Invalidated)
                            && o.parent == frame.parent => {}
                    _ => {
                        return Err(format!(
                            "{} retries {original}, which is not a failed sibling",
                            frame.id
                        ));
                    }
                }
            }
        }
        for (parent, list) in &self.children {
            for (expected, &i) in list.iter().enumerate() {
                if self.frames[i].position as usize != expected {
                    return Err(format!(
                        "the children of {parent} are not at dense positions 0..{}",
                        list.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TreeId;

    fn frame(id: &str, parent: Option<&str>) -> Frame {
        Frame::new(
            FrameId::from_trusted(id.to_owned()),
            TreeId::from_trusted("t1".to_owned()),
            parent.map(|p| FrameId::from_trusted(p.to_owned())),
            0,
            id,
            "done when done",
            Status::Planned,
            0,
        )
    }

    fn tree(frames: Vec<Frame>) -> FrameTree {
        let root = FrameId::from_trusted("r".to_owned());
        let tree = Tree {
            id: TreeId::from_trusted("t1".to_owned()),
            title: "t".to_owned(),
            root: root.clone(),
            focus: root,
            created_at: 0,
            workspace: None,
        };
        FrameTree::new(tree, frames)
    }

    #[test]
    fn the_first_frame_that_does_not_reach_the_root_is_named() {
        let chain = |id, parent| frame(id, Some(parent));
        let whole = tree(vec![frame("r", None), chain("a", "r"), chain("b", "a"), chain("c", "b")]);
        assert_eq!(whole.check_invariants(), Ok(()));

        let lost =
            tree(vec![frame("r", None), chain("a", "r"), chain("x", "gone"), chain("y", "x")]);
        assert_eq!(
            lost.check_invariants(),
            Err("x does not reach the root (a cycle or a missing parent)".to_owned())
        );

        // A cycle, after frames that reach the root through a shared ancestor.
        let cycle = tree(vec![
            frame("r", None),
            chain("a", "r"),
            chain("b", "a"),
            chain("p", "q"),
            chain("q", "p"),
        ]);
        assert_eq!(
            cycle.check_invariants(),
            Err("p does not reach the root (a cycle or a missing parent)".to_owned())
        );
    }
}
