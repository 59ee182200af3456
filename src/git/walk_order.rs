//! What both of guard's commit walks share (the commit-graph walk in `range` and the walk
//! that reads commit objects in `date_walk`): libgit2's topological order, which both must
//! give.

/// `found` (commits as indices below `nodes`, tips in the order the walk found them) in the
/// order libgit2's `TOPOLOGICAL | REVERSE` walk gives: from the tip, depth first with a
/// stack, a commit after all of its children in `found` and the last parent's line first,
/// reversed.
pub(super) fn topological<'a>(
    found: &[usize],
    nodes: usize,
    parents_of: impl Fn(usize) -> &'a [u32],
) -> Vec<usize> {
    // 1 + the number of children in the range; 0 outside the range or once emitted.
    let mut in_degree = vec![0usize; nodes];
    for &i in found {
        in_degree[i] = 1;
    }
    for &i in found {
        for &p in parents_of(i) {
            if in_degree[p as usize] > 0 {
                in_degree[p as usize] += 1;
            }
        }
    }
    // The tips, in the order the walk found them; popped from the end, so reversed.
    let mut stack: Vec<usize> = found
        .iter()
        .copied()
        .filter(|&i| in_degree[i] == 1)
        .collect();
    stack.reverse();
    let mut out = Vec::with_capacity(found.len());
    while let Some(i) = stack.pop() {
        for &p in parents_of(i) {
            let p = p as usize;
            if in_degree[p] == 0 {
                continue;
            }
            in_degree[p] -= 1;
            if in_degree[p] == 1 {
                stack.push(p);
            }
        }
        in_degree[i] = 0;
        out.push(i);
    }
    out.reverse();
    out
}
