//! The one way a view asks the worker: each ask is numbered ([`Request::Ask`]) and every reply
//! carries its number ([`Response::Reply`](crate::protocol::Response::Reply)), so that the
//! answer is the asking component's own (a signal it holds, dropped with it), not a global one
//! that must echo what was asked to be told apart. [`use_answer`] asks again whenever what it
//! asks or the data change; the latest ask wins, and a reply to an earlier one (or to a view
//! since gone) is dropped.
//!
//! The registry of numbers is plain Rust (no browser), so that `crate::reducer` hands it the
//! replies in native tests too.

use crate::protocol::{Ask, Reply, Request, Snapshot};
use crate::state::{AppState, Shared};
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// What is done with a reply to one number.
type OnReply = Rc<dyn Fn(Reply)>;

thread_local! {
    /// The last number given to an ask.
    static LAST: Cell<u64> = const { Cell::new(0) };
    /// The asks whose replies someone waits for, by number.
    static WAITING: RefCell<BTreeMap<u64, OnReply>> = const { RefCell::new(BTreeMap::new()) };
    /// How an ask reaches the worker (see [`connect`]).
    static POST: Cell<Option<fn(&Request)>> = const { Cell::new(None) };
}

/// Asks go out by `post` (`crate::wiring` connects the transport). The transport is not named
/// here: its replies come back through `crate::reducer`, which names this module, and the
/// three import one way.
pub fn connect(post: fn(&Request)) {
    POST.with(|p| p.set(Some(post)));
}

/// Asks the worker `ask`; every reply to it goes to `on_reply` (given the ask's number) until
/// [`forget`]. Its number.
pub fn send(ask: Ask, on_reply: impl Fn(u64, Reply) + 'static) -> u64 {
    let id = LAST.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    WAITING.with(|w| {
        w.borrow_mut()
            .insert(id, Rc::new(move |body| on_reply(id, body)))
    });
    if let Some(post) = POST.with(Cell::get) {
        post(&Request::Ask { id, ask });
    }
    id
}

/// Replies to ask `id` are no longer wanted: they are dropped.
pub fn forget(id: u64) {
    WAITING.with(|w| w.borrow_mut().remove(&id));
}

/// A reply of the worker, to whoever waits for its number; nobody (an ask overtaken, a view
/// gone): dropped. Whether someone took it.
pub fn deliver(id: u64, body: Reply) -> bool {
    // Cloned out of the registry before it runs: it may ask again.
    let on_reply = WAITING.with(|w| w.borrow().get(&id).cloned());
    match on_reply {
        Some(f) => {
            f(body);
            true
        }
        None => false,
    }
}

/// The answer a view asked for, and what it asked.
pub struct Answer<K: 'static, T: 'static> {
    asked: RwSignal<Option<u64>>,
    got: RwSignal<Option<(u64, K, T)>>,
}

impl<K, T> Clone for Answer<K, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, T> Copy for Answer<K, T> {}

impl<K, T> Answer<K, T>
where
    K: Clone + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    /// The answer to what is asked now; `None` while it is awaited (or nothing is asked).
    pub fn current(&self) -> Option<T> {
        let asked = self.asked.get()?;
        self.got.with(|g| {
            g.as_ref()
                .filter(|(id, _, _)| *id == asked)
                .map(|(_, _, t)| t.clone())
        })
    }

    /// The last answer had, with what it answered: the one to an earlier ask stays until the
    /// new one comes (a view that must not blink while the worker works).
    pub fn last(&self) -> Option<(K, T)> {
        self.got
            .with(|g| g.as_ref().map(|(_, k, t)| (k.clone(), t.clone())))
    }

    /// Whether the answer shown is not yet the one to what is asked now.
    pub fn pending(&self) -> bool {
        let asked = self.asked.get();
        asked.is_some() && self.got.with(|g| g.as_ref().map(|g| g.0) != asked)
    }

    /// Changes the answer held (a search the page stopped).
    pub fn update(&self, f: impl FnOnce(&mut T)) {
        self.got.update(|g| {
            if let Some((_, _, t)) = g {
                f(t)
            }
        });
    }
}

/// Asks the worker `ask(k)` whenever `key` gives a new `k` (nothing while it gives `None`) or
/// the data change (a new load, which forgets the answer had), and keeps the answer: `take`
/// turns each reply to the latest ask into it, given what that ask got before (a search
/// replies as it goes).
pub fn use_answer<K, T>(
    key: impl Fn() -> Option<K> + Send + Sync + 'static,
    ask: fn(&K) -> Ask,
    take: fn(Reply, Option<&T>) -> Option<T>,
) -> Answer<K, T>
where
    K: Clone + PartialEq + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
{
    let state = expect_context::<AppState>();
    let key = Memo::new(move |_| key());
    let answer = Answer {
        asked: RwSignal::new(None),
        got: RwSignal::new(None),
    };
    Effect::new(move |before: Option<Shared<Snapshot>>| {
        let snapshot = state.snapshot.get();
        if before.is_some_and(|b| b != snapshot) {
            // A new load: what was had is of the files before.
            answer.got.set(None);
        }
        if let Some(old) = answer.asked.get_untracked() {
            forget(old);
        }
        let Some(k) = key.get() else {
            answer.asked.set(None);
            return snapshot;
        };
        let asked = k.clone();
        let id = send(ask(&k), move |id, body| {
            let Some(got) = answer.got.try_with_untracked(|g| {
                let before = g.as_ref().filter(|(n, _, _)| *n == id).map(|(_, _, t)| t);
                take(body, before)
            }) else {
                // The view is gone.
                return forget(id);
            };
            if let Some(t) = got {
                answer.got.set(Some((id, asked.clone(), t)));
            }
        });
        answer.asked.set(Some(id));
        snapshot
    });
    on_cleanup(move || {
        if let Some(id) = answer.asked.try_get_untracked().flatten() {
            forget(id);
        }
    });
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn a_reply_goes_to_its_ask_and_one_no_longer_awaited_is_dropped() {
        let got = Rc::new(RefCell::new(Vec::new()));
        let ask = || Ask::Question { id: "q1".into() };
        let (first, second) = {
            let (a, b) = (Rc::clone(&got), Rc::clone(&got));
            let first = send(ask(), move |id, _| a.borrow_mut().push(id));
            let second = send(ask(), move |id, _| b.borrow_mut().push(id));
            (first, second)
        };
        assert_ne!(first, second, "each ask is numbered anew");
        // The first is overtaken: its reply, late, is dropped.
        forget(first);
        let body = || Reply::Items(Vec::new());
        assert!(deliver(second, body()));
        assert!(!deliver(first, body()));
        // A search replies several times to one number.
        assert!(deliver(second, body()));
        assert_eq!(*got.borrow(), [second, second]);
        forget(second);
        assert!(!deliver(second, body()));
    }
}
