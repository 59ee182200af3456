//! Commit-graph files (`git::graph`, which the history walks read instead of inflating
//! commits): any bytes as a one-file graph, SHA-1 or SHA-256 (the first byte: even 20-byte
//! ids, odd 32). No panic, no read past the file; and a graph that opens answers
//! consistently: every position up to the length has an id, `identity` agrees with `id`,
//! every parent `commit` gives is a position in the graph, and `find` finds each listed id at
//! a position with that id: at its own position when the ids are listed strictly ascending
//! under the fanout that counts them (as git writes them; an unsorted list, which the open
//! does not check, as git's own reader does not, only makes `find` miss, and then the
//! caller reads the commit from the object database).
#![no_main]
use git2::Oid;
use libfuzzer_sys::fuzz_target;
use merge_guard::git::graph::fuzzing::commit_graph;

/// Positions checked per input.
const CHECKED: u32 = 4_096;

fuzz_target!(|data: &[u8]| {
    let Some((&format, file)) = data.split_first() else {
        return;
    };
    let hash_len = if format % 2 == 0 { 20 } else { 32 };
    let Some(graph) = commit_graph(file, hash_len) else {
        return;
    };
    let len = graph.len();
    assert_eq!(graph.is_empty(), len == 0);
    let ids: Vec<_> = (0..len.min(CHECKED))
        .map(|p| {
            graph
                .id(p)
                .unwrap_or_else(|| panic!("no id at {p} of {len}"))
        })
        .collect();
    let sorted =
        ids.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()) && fanout_counts(file, &ids, len);
    let mut parents = Vec::new();
    for (p, &id) in (0..).zip(&ids) {
        assert_eq!(id.as_bytes().len(), hash_len);
        match graph.find(id) {
            Some(q) => assert_eq!(graph.id(q), Some(id), "find({id}) = {q}"),
            None => assert!(!sorted, "find({id}) misses position {p}"),
        }
        if sorted {
            assert_eq!(graph.find(id), Some(p));
        }
        let (same, tree, generation) = graph.identity(p).expect("identity");
        assert_eq!(same, id);
        assert_eq!(tree.as_bytes().len(), hash_len);
        if let Some(commit) = graph.commit(p) {
            assert_eq!((commit.tree, commit.generation), (tree, generation));
            assert!(
                commit.parents.iter().all(|&q| q < len),
                "{commit:?} of {len}"
            );
            assert_eq!(graph.parents(p, &mut parents), Some(()));
            assert_eq!(parents, commit.parents);
        } else {
            assert_eq!(graph.parents(p, &mut parents), None);
        }
    }
    assert_eq!(graph.id(len), None);
    assert_eq!(graph.identity(len), None);
    assert_eq!(graph.commit(len), None);
});

/// Whether the fanout chunk counts `ids` (all of the graph's, sorted) as git writes it: entry
/// `b` is the number of ids whose first byte is at most `b`. Found as the graph reader finds
/// it, from the chunk table (the last `OIDF` entry).
fn fanout_counts(file: &[u8], ids: &[Oid], len: u32) -> bool {
    if ids.len() != len as usize {
        return false; // more than were checked: not worth proving
    }
    let chunks = usize::from(file[6]);
    let Some(at) = (0..chunks)
        .map(|c| 8 + c * 12)
        .filter(|&at| &file[at..at + 4] == b"OIDF")
        .last()
    else {
        return false;
    };
    let start = u64::from_be_bytes(file[at + 4..at + 12].try_into().unwrap()) as usize;
    let mut below = [0u32; 256];
    for id in ids {
        below[usize::from(id.as_bytes()[0])] += 1;
    }
    let mut count = 0;
    (0..256).all(|b| {
        count += below[b];
        file[start + b * 4..start + b * 4 + 4] == count.to_be_bytes()
    })
}
