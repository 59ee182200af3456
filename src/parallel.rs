//! Work spread over threads: items by index, each thread with state of its own (a read
//! buffer, a repository handle and its pack readers), results back by index.
//!
//! [`each`] hands the next item to whichever thread asks (hashing fixtures, parsing test
//! files: items share nothing). [`each_in_runs`] gives each thread a run of neighbouring
//! items and lets a thread done with its own take from the far end of another's: a walk of
//! a range's commits reads trees stored as deltas on the trees of the next commits, so a
//! thread that walks neighbouring blocks rebuilds each chain of deltas once, where threads
//! taking blocks in turn each rebuilt every chain (7,600 of the 12,200 trees a push of 1,000
//! commits brought were inflated on both threads).

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads work runs on: the cores this process may use, asked once
/// (`available_parallelism` reads the cgroup's CPU quota from files each time).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `work(state, i)` for every `i` in `0..count`, on up to `threads` threads, results by index.
///
/// Each thread takes the next index from a shared counter rather than a fixed slice, so one
/// huge item does not leave the other cores idle behind it (callers order items largest
/// first where they know sizes). Each thread makes its own state with `state` and keeps it
/// for all its items; a thread whose `state` is `None` leaves its share to the others. An
/// item comes back `None` when no thread could work on it or the thread that took it
/// panicked: the caller fails closed (or retries) rather than the whole process going down.
/// With one thread (or item) the calling thread does the work.
pub fn each<S, R: Send>(
    count: usize,
    threads: usize,
    state: impl Fn() -> Option<S> + Sync,
    work: impl Fn(&mut S, usize) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    // Relaxed is enough: the counter only hands out distinct indexes; the results travel
    // back through `join`, which synchronises.
    let claim = |_thread: usize| Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < count);
    on_threads(count, threads, state, work, claim)
}

/// [`each`], thread `t` of `n` taking the items of its run (`t * count / n` up to the next
/// thread's) in order, then, its run done, the last item left of the run with the most
/// left, and so on (walking that run backwards, from its far end towards its owner).
pub fn each_in_runs<S, R: Send>(
    count: usize,
    threads: usize,
    state: impl Fn() -> Option<S> + Sync,
    work: impl Fn(&mut S, usize) -> R + Sync,
) -> Vec<Option<R>> {
    let runs = Runs::new(count, threads.min(count).max(1));
    on_threads(count, threads, state, work, |t| runs.claim(t))
}

/// The items not yet taken, one run per thread.
struct Runs(Mutex<Vec<Range<usize>>>);

impl Runs {
    fn new(count: usize, threads: usize) -> Runs {
        let start = |t: usize| t * count / threads;
        Runs(Mutex::new(
            (0..threads).map(|t| start(t)..start(t + 1)).collect(),
        ))
    }

    /// The next item for thread `t`: the first of its own run, else the last of the longest.
    fn claim(&self, t: usize) -> Option<usize> {
        // Nothing panics while the lock is held: a poisoned lock still holds good runs.
        let mut runs = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = runs.get_mut(t).and_then(Iterator::next) {
            return Some(i);
        }
        runs.iter_mut().max_by_key(|run| run.len())?.next_back()
    }
}

/// Runs `work` on up to `threads` threads, thread `t` taking items while `claim(t)` has one.
fn on_threads<S, R: Send>(
    count: usize,
    threads: usize,
    state: impl Fn() -> Option<S> + Sync,
    work: impl Fn(&mut S, usize) -> R + Sync,
    claim: impl Fn(usize) -> Option<usize> + Sync,
) -> Vec<Option<R>> {
    // No state is made for no work: making it can cost more than a small walk (a repository
    // handle of its own, its packs listed).
    if count == 0 {
        return Vec::new();
    }
    let threads = threads.min(count);
    let mut results: Vec<Option<R>> = (0..count).map(|_| None).collect();
    if threads <= 1 {
        if let Some(mut s) = state() {
            for (i, slot) in results.iter_mut().enumerate() {
                *slot = Some(work(&mut s, i));
            }
        }
        return results;
    }
    let (state, work, claim) = (&state, &work, &claim);
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    let Some(mut s) = state() else {
                        return mine;
                    };
                    while let Some(i) = claim(t) {
                        mine.push((i, work(&mut s, i)));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    type State<'a> = &'a (dyn Fn() -> Option<()> + Sync);
    type Work<'a> = &'a (dyn Fn(&mut (), usize) -> usize + Sync);
    type Spread<'a> = &'a dyn Fn(usize, usize, State, Work) -> Vec<Option<usize>>;

    #[test]
    fn a_thread_without_state_leaves_its_share_to_the_others() {
        let each_: Spread = &|c, t, s, w| each(c, t, s, w);
        let in_runs: Spread = &|c, t, s, w| each_in_runs(c, t, s, w);
        for spread in [each_, in_runs] {
            let made = AtomicUsize::new(0);
            // The first thread to start gets no state: the others do all the work.
            let first_none = || (made.fetch_add(1, Ordering::Relaxed) != 0).then_some(());
            let got = spread(100, 4, &first_none, &|_, i| i * 2);
            assert_eq!(got, (0..100).map(|i| Some(i * 2)).collect::<Vec<_>>());
            // No state anywhere (and on the calling thread alone): nothing done, nothing
            // made up.
            let none = || None::<()>;
            assert!(spread(5, 3, &none, &|_, i| i).iter().all(Option::is_none));
            assert!(spread(5, 1, &none, &|_, i| i).iter().all(Option::is_none));
            let some = || Some(());
            assert_eq!(
                spread(3, 1, &some, &|_, i| i),
                vec![Some(0), Some(1), Some(2)]
            );
            // No work, no state made (a walk's is a repository handle of its own).
            let made = AtomicUsize::new(0);
            let counted = || Some(made.fetch_add(1, Ordering::Relaxed)).map(|_| ());
            assert!(spread(0, 4, &counted, &|_, i| i).is_empty());
            assert!(spread(0, 1, &counted, &|_, i| i).is_empty());
            assert_eq!(made.load(Ordering::Relaxed), 0);
        }
    }

    #[test]
    fn a_thread_takes_its_own_run_in_order_then_the_far_end_of_the_longest() {
        let runs = Runs::new(10, 2);
        // Thread 0 owns 0..5, thread 1 owns 5..10.
        assert_eq!(runs.claim(0), Some(0));
        assert_eq!(runs.claim(1), Some(5));
        assert_eq!(runs.claim(0), Some(1));
        for i in 6..10 {
            assert_eq!(runs.claim(1), Some(i));
        }
        // Thread 1 is done with its run: it walks thread 0's back from the end.
        assert_eq!(runs.claim(1), Some(4));
        assert_eq!(runs.claim(1), Some(3));
        assert_eq!(runs.claim(0), Some(2));
        assert_eq!(runs.claim(0), None);
        assert_eq!(runs.claim(1), None);

        // Uneven counts: runs of 3, 3 and 4 (no item lost or given twice), and a thread
        // beyond the runs takes from the longest.
        let runs = Runs::new(10, 3);
        assert_eq!(runs.claim(7), Some(9));
        let mut taken: Vec<usize> = std::iter::from_fn(|| runs.claim(0)).collect();
        assert_eq!(&taken[..3], &[0, 1, 2]);
        taken.sort_unstable();
        assert_eq!(taken, (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn each_in_runs_does_every_item_once_and_returns_them_by_index() {
        let calls = AtomicUsize::new(0);
        let got = each_in_runs(
            1000,
            3,
            || Some(Vec::new()),
            |seen: &mut Vec<usize>, i| {
                calls.fetch_add(1, Ordering::Relaxed);
                seen.push(i);
                i * 3
            },
        );
        assert_eq!(calls.load(Ordering::Relaxed), 1000);
        assert_eq!(got, (0..1000).map(|i| Some(i * 3)).collect::<Vec<_>>());
    }
}
