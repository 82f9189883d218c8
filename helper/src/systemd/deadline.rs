//! A deadline for a future on zbus's executor.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

/// Runs `future` until it completes or `timeout` passes (`None`).
///
/// zbus's runtime has no public timer; a helper thread that wakes the task at the
/// deadline is enough for a short-lived helper. It exits as soon as the future is done.
pub async fn with_deadline<F: Future>(timeout: Duration, future: F) -> Option<F::Output> {
    #[derive(Default)]
    struct Shared {
        expired: bool,
        waker: Option<Waker>,
    }
    let shared = Arc::new(Mutex::new(Shared::default()));
    let timer = Arc::clone(&shared);
    let (done, done_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
            let mut state = timer.lock().unwrap_or_else(|p| p.into_inner());
            state.expired = true;
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
    });
    let mut future = std::pin::pin!(future);
    let output = std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        let mut state = shared.lock().unwrap_or_else(|p| p.into_inner());
        if state.expired {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    })
    .await;
    // Dropping the sender ends the timer thread.
    drop(done);
    output
}
