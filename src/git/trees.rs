//! Entry budgets on a box's trees (SPEC §8.8): how many entries a tree holds, or how
//! many differ between two, counted before libgit2 is asked to diff or merge them.
//!
//! A tree is cheap to make large: 22 tree objects, each naming the one below twice,
//! are 4 M files (296 KB of objects), and 40 M would exhaust the machine. libgit2's
//! diff walks every one of them (`ls` took 33 s and 1.8 GB), and a merge of trees
//! holds the result as a flat index. [`Trees`] counts the same entries with every
//! tree object read once (a count is kept per tree, and per pair of trees compared),
//! so the bomb costs 22 reads; over the budget the answer is
//! [`WalkError::TooLarge`], and the caller reports the field too large. Trees
//! themselves are bounded too: no more than the budget of entries is read in all, a
//! tree object larger than [`BYTES_PER_ENTRY`] times the budget is not read, and
//! trees nest at most [`MAX_DEPTH`] deep.

use std::collections::HashMap;

use git2::{ObjectType, Oid, Repository};

pub use super::history::WalkError;

/// The entries a diff or merge of a box's trees may involve, at least (callers scale
/// it with the user's own tree: [`budget_for`]).
pub const MAX_ENTRIES: u64 = 250_000;

/// A tree object may be this many bytes per entry of the budget (an entry is 28
/// bytes and a name).
pub const BYTES_PER_ENTRY: u64 = 64;

/// Trees nest at most this deep (git has no limit; the count is not recursive, the
/// comparison is).
pub const MAX_DEPTH: usize = 512;

/// The budget for a box's trees in a repository whose own tree (the base's) holds
/// `own` entries: four times that, at least [`MAX_ENTRIES`].
pub fn budget_for(own: u64) -> u64 {
    MAX_ENTRIES.max(own.saturating_mul(4))
}

/// One tree's entries: name, object, is it a tree.
type Entries = std::rc::Rc<Vec<(Vec<u8>, Oid, bool)>>;

/// Counts of one repository's trees within one budget; counts are kept for the next
/// question.
pub struct Trees<'r> {
    repo: &'r Repository,
    budget: u64,
    /// Entries read so far, in all.
    looked: u64,
    read: HashMap<Oid, Entries>,
    counts: HashMap<Oid, u64>,
    pairs: HashMap<(Oid, Oid), u64>,
}

impl<'r> Trees<'r> {
    pub fn new(repo: &'r Repository, budget: u64) -> Trees<'r> {
        Trees {
            repo,
            budget,
            looked: 0,
            read: HashMap::new(),
            counts: HashMap::new(),
            pairs: HashMap::new(),
        }
    }

    /// A new question: the budget of entries read starts again (the trees read are
    /// let go; the counts made are kept).
    pub fn fresh(&mut self) {
        self.looked = 0;
        self.read.clear();
    }

    fn too_large(&self) -> WalkError {
        WalkError::TooManyEntries(self.budget)
    }

    fn entries_of(&mut self, tree: Oid) -> Result<Entries, WalkError> {
        if let Some(e) = self.read.get(&tree) {
            return Ok(e.clone());
        }
        let odb = self.repo.odb()?;
        let (size, kind) = odb.read_header(tree)?;
        if kind != ObjectType::Tree {
            return Err(git2::Error::from_str("not a tree").into());
        }
        if size as u64 > self.budget.saturating_mul(BYTES_PER_ENTRY) {
            return Err(self.too_large());
        }
        let t = self.repo.find_tree(tree)?;
        self.looked += t.len() as u64;
        if self.looked > self.budget {
            return Err(self.too_large());
        }
        let e: Entries = std::rc::Rc::new(
            t.iter()
                .map(|e| {
                    let is_tree = e.kind() == Some(ObjectType::Tree);
                    (e.name_bytes().to_vec(), e.id(), is_tree)
                })
                .collect(),
        );
        self.read.insert(tree, e.clone());
        Ok(e)
    }

    /// The files, links and submodules under `tree`, as a flat index holds them.
    pub fn entries(&mut self, tree: Oid) -> Result<u64, WalkError> {
        // Depth first without recursion: (tree, its entries counted so far, next index).
        let mut stack: Vec<(Oid, u64, usize)> = vec![(tree, 0, 0)];
        let mut done = None;
        while let Some((oid, sum, at)) = stack.pop() {
            if let Some(n) = self.counts.get(&oid).copied() {
                done = Some(n);
                if let Some(top) = stack.last_mut() {
                    top.1 = top.1.saturating_add(n);
                }
                continue;
            }
            let e = self.entries_of(oid)?;
            let mut sum = sum;
            let mut at = at;
            let mut descend = None;
            while at < e.len() {
                let (_, child, is_tree) = &e[at];
                at += 1;
                if *is_tree {
                    descend = Some(*child);
                    break;
                }
                sum += 1;
            }
            if sum > self.budget {
                return Err(self.too_large());
            }
            match descend {
                Some(child) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.too_large());
                    }
                    stack.push((oid, sum, at));
                    stack.push((child, 0, 0));
                }
                None => {
                    self.counts.insert(oid, sum);
                    done = Some(sum);
                    if let Some(top) = stack.last_mut() {
                        top.1 = top.1.saturating_add(sum);
                    }
                }
            }
        }
        let n = done.unwrap_or(0);
        if n > self.budget {
            return Err(self.too_large());
        }
        Ok(n)
    }

    /// How many files, links and submodules differ between `old` and `new` (either
    /// absent: all of the other's): what a diff of the two would list, at most.
    pub fn changed(&mut self, old: Option<Oid>, new: Option<Oid>) -> Result<u64, WalkError> {
        let n = self.changed_at(old, new, 0)?;
        if n > self.budget {
            return Err(self.too_large());
        }
        Ok(n)
    }

    fn changed_at(
        &mut self,
        old: Option<Oid>,
        new: Option<Oid>,
        depth: usize,
    ) -> Result<u64, WalkError> {
        let (old, new) = match (old, new) {
            (None, None) => return Ok(0),
            (Some(t), None) | (None, Some(t)) => return self.entries(t),
            (Some(a), Some(b)) if a == b => return Ok(0),
            (Some(a), Some(b)) => (a, b),
        };
        if let Some(n) = self.pairs.get(&(old, new)) {
            return Ok(*n);
        }
        if depth >= MAX_DEPTH {
            return Err(self.too_large());
        }
        let (a, b) = (self.entries_of(old)?, self.entries_of(new)?);
        let mut by_name: HashMap<&[u8], (Oid, bool)> =
            a.iter().map(|(n, o, t)| (n.as_slice(), (*o, *t))).collect();
        let mut sum: u64 = 0;
        for (name, oid, is_tree) in b.iter() {
            let n = match by_name.remove(name.as_slice()) {
                Some((o, _)) if o == *oid => 0,
                Some((o, true)) if *is_tree => self.changed_at(Some(o), Some(*oid), depth + 1)?,
                // A file changed: one delta.
                Some((_, false)) if !*is_tree => 1,
                // A file became a directory, or back: every entry of both.
                Some((o, was_tree)) => self.side(o, was_tree)? + self.side(*oid, *is_tree)?,
                None => self.side(*oid, *is_tree)?,
            };
            sum = sum.saturating_add(n);
            if sum > self.budget {
                return Err(self.too_large());
            }
        }
        let gone: Vec<(Oid, bool)> = by_name.into_values().collect();
        for (o, t) in gone {
            sum = sum.saturating_add(self.side(o, t)?);
        }
        if sum > self.budget {
            return Err(self.too_large());
        }
        self.pairs.insert((old, new), sum);
        Ok(sum)
    }

    /// An entry on one side only: 1, or all under it.
    fn side(&mut self, oid: Oid, is_tree: bool) -> Result<u64, WalkError> {
        if is_tree {
            self.entries(oid)
        } else {
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests;
