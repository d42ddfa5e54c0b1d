//! A per-BMC request gate with two priorities. Requests whose answer leads to more requests
//! (collections, systems, chassis, adapters) go before leaf documents (a DIMM, a drive, a
//! port), so the longest chain of the walk is never stuck behind leaves and the BMC's few
//! request slots stay busy until the end. Waiters are served in arrival order within a
//! priority; a cancelled waiter is skipped.

use std::collections::BinaryHeap;
use std::sync::Mutex;

use tokio::sync::oneshot;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Priority {
    Leaf,
    Branch,
}

struct Waiter {
    prio: Priority,
    seq: u64,
    tx: oneshot::Sender<()>,
}

impl PartialEq for Waiter {
    fn eq(&self, o: &Self) -> bool {
        (self.prio, self.seq) == (o.prio, o.seq)
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Waiter {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Higher priority first, then the earlier arrival (smaller seq).
        self.prio.cmp(&o.prio).then(o.seq.cmp(&self.seq))
    }
}

struct State {
    free: usize,
    seq: u64,
    waiting: BinaryHeap<Waiter>,
}

pub(crate) struct Gate {
    state: Mutex<State>,
}

pub(crate) struct Permit<'a> {
    gate: &'a Gate,
}

impl Gate {
    pub(crate) fn new(slots: usize) -> Gate {
        Gate {
            state: Mutex::new(State {
                free: slots.max(1),
                seq: 0,
                waiting: BinaryHeap::new(),
            }),
        }
    }

    pub(crate) async fn acquire(&self, prio: Priority) -> Permit<'_> {
        let rx = {
            let mut s = self.state.lock().expect("not poisoned");
            if s.free > 0 && s.waiting.is_empty() {
                s.free -= 1;
                return Permit { gate: self };
            }
            let (tx, rx) = oneshot::channel();
            s.seq += 1;
            let seq = s.seq;
            s.waiting.push(Waiter { prio, seq, tx });
            rx
        };
        // The sender is only dropped by a hand-over that found us gone, so an error here
        // cannot happen while we wait; treat it as granted anyway.
        let _ = rx.await;
        Permit { gate: self }
    }

    fn release(&self) {
        let mut s = self.state.lock().expect("not poisoned");
        while let Some(w) = s.waiting.pop() {
            if w.tx.send(()).is_ok() {
                return; // the slot passes straight to the waiter
            }
        }
        s.free += 1;
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.gate.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn branches_go_before_leaves_and_slots_are_never_lost() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let gate = Arc::new(Gate::new(1));
            let order = Arc::new(Mutex::new(Vec::new()));
            let first = gate.acquire(Priority::Leaf).await;
            let mut tasks = Vec::new();
            for (i, p) in [
                Priority::Leaf,
                Priority::Branch,
                Priority::Leaf,
                Priority::Branch,
            ]
            .into_iter()
            .enumerate()
            {
                let g = gate.clone();
                let o = order.clone();
                tasks.push(tokio::spawn(async move {
                    let _p = g.acquire(p).await;
                    o.lock().unwrap().push(i);
                }));
                tokio::task::yield_now().await;
            }
            // A waiter that gives up must not swallow a slot.
            let g = gate.clone();
            let cancelled = tokio::spawn(async move {
                let _p = g.acquire(Priority::Branch).await;
            });
            tokio::task::yield_now().await;
            cancelled.abort();
            drop(first);
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(*order.lock().unwrap(), vec![1, 3, 0, 2]);
            let _again = gate.acquire(Priority::Leaf).await;
        });
    }
}
