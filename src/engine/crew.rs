//! A few host threads spawned once and given many small parallel steps: the GPU executor's
//! uploader fills each band of page-locked staging on them. Spawning threads per step cost the
//! uploader 8 spawns per 16 MB band, 64 bands for a 16384² float32 plane: tens of
//! microseconds each (about 60 µs a spawn and join on the development machine), on the path
//! every first block waits on.
//!
//! The crew is not a rayon pool on purpose: a rayon worker that waits for another pool keeps
//! running its own pool's jobs meanwhile, and the uploader's own pool holds block jobs that
//! wait for the rows the uploader has yet to publish.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::thread::Scope;

use crate::error::{Error, Result};

/// A step for a crew thread.
pub(crate) type Job<'env> = Box<dyn FnOnce() -> Result<()> + Send + 'env>;

/// Threads of a [`std::thread::scope`] that run [`Job`]s until the crew is dropped.
pub(crate) struct Crew<'env> {
    jobs: Vec<mpsc::Sender<Job<'env>>>,
    done: mpsc::Receiver<Result<()>>,
}

impl<'env> Crew<'env> {
    /// `threads` (at least one) threads of `scope`; they end when the crew is dropped.
    pub(crate) fn spawn<'scope>(scope: &'scope Scope<'scope, 'env>, threads: usize) -> Self {
        let (done_tx, done) = mpsc::channel();
        let jobs = (0..threads.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel::<Job<'env>>();
                let done_tx = done_tx.clone();
                scope.spawn(move || {
                    for job in rx {
                        let result = std::panic::catch_unwind(AssertUnwindSafe(job))
                            .unwrap_or_else(|_| {
                                Err(Error::InvalidArgument(
                                    "a thread reading the input panicked".into(),
                                ))
                            });
                        if done_tx.send(result).is_err() {
                            break;
                        }
                    }
                });
                tx
            })
            .collect();
        Crew { jobs, done }
    }

    /// The crew's threads.
    pub(crate) fn threads(&self) -> usize {
        self.jobs.len()
    }

    /// Runs `jobs` (job k on thread k modulo the crew's size) and returns once every one has
    /// finished: `Ok`, or the first error any returned (a panic is an error).
    pub(crate) fn run(&self, jobs: Vec<Job<'env>>) -> Result<()> {
        let mut sent = 0;
        let mut result = Ok(());
        for (k, job) in jobs.into_iter().enumerate() {
            match self.jobs[k % self.jobs.len()].send(job) {
                Ok(()) => sent += 1,
                Err(mpsc::SendError(job)) => {
                    // The thread is gone (it cannot be while the crew lives): run it here.
                    result = result.and(job());
                }
            }
        }
        for _ in 0..sent {
            let r = self.done.recv().unwrap_or_else(|_| {
                Err(Error::InvalidArgument(
                    "a thread reading the input stopped".into(),
                ))
            });
            result = result.and(r);
        }
        result
    }
}

/// A part of a buffer handed to one crew job: the caller keeps the buffer alive and
/// untouched, and the parts disjoint, until [`Crew::run`] returns.
pub(crate) struct RawPart {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a RawPart is one job's exclusive part of a buffer (see its documentation).
unsafe impl Send for RawPart {}

impl RawPart {
    /// The part `bytes`.
    pub(crate) fn new(bytes: &mut [u8]) -> Self {
        RawPart {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
        }
    }

    /// The bytes again.
    ///
    /// # Safety
    /// The buffer must still be alive and no other reference to this part may exist (the
    /// contract of [`RawPart`]).
    pub(crate) unsafe fn bytes<'a>(self) -> &'a mut [u8] {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_fill_their_parts_on_the_crew_and_errors_come_back() {
        let mut buffer = vec![0u8; 1000];
        std::thread::scope(|scope| {
            let crew = Crew::spawn(scope, 3);
            assert_eq!(crew.threads(), 3);
            for round in 1..=5u8 {
                let jobs: Vec<Job<'_>> = buffer
                    .chunks_mut(128)
                    .map(|chunk| {
                        let part = RawPart::new(chunk);
                        Box::new(move || {
                            // SAFETY: run returns after every job; the chunks are disjoint.
                            unsafe { part.bytes() }.fill(round);
                            Ok(())
                        }) as Job<'_>
                    })
                    .collect();
                crew.run(jobs).unwrap();
                assert!(buffer.iter().all(|&b| b == round));
            }
            let failing: Vec<Job<'_>> = vec![
                Box::new(|| Ok(())),
                Box::new(|| Err(Error::InvalidArgument("no".into()))),
                Box::new(|| panic!("a job panics")),
            ];
            let e = crew.run(failing).unwrap_err();
            assert!(e.to_string().contains("no"), "{e}");
            // The crew still works after a panic.
            crew.run(vec![Box::new(|| Ok(()))]).unwrap();
        });
    }
}
