//! One owner per output file: [`OutputLock`], an advisory lock on `<output>.lock`.
//!
//! A run that writes an output holds the lock exclusively for its whole life; the kernel
//! releases it when the process dies, however it dies, so a lock can never be left stale.
//! Worker processes started by the owner share the owner's lock (they inherit its open file,
//! see [`OutputLock::share_with`]), so the lock stays held while any of them is alive; workers
//! started by an external scheduler take it shared ([`OutputLock::acquire_shared`]). A second
//! run on the same output therefore fails at once, naming the owner, and never reads, resumes,
//! deletes or publishes what a live run owns.
//!
//! The lock file is created on demand and removed by an exclusive owner when it lets go; a
//! process that opened the old file just before the removal notices (the name no longer leads
//! to the file it locked) and tries again.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable through which a worker process learns the descriptor of the lock
/// it inherited from its owner: `<fd>:<lock file path>`, one per lock, separated by `;`.
///
/// ```
/// use reproject::io::{OutputLock, INHERITED_LOCKS_VAR};
/// let out = std::env::temp_dir().join(format!("var_doc_{}.fits", std::process::id()));
/// let lock = OutputLock::acquire(&out)?;
/// let mut child = std::process::Command::new("sh");
/// child.args(["-c", &format!("echo ${INHERITED_LOCKS_VAR}")]);
/// OutputLock::share_with(&[&lock], &mut child);
/// let seen = String::from_utf8(child.output()?.stdout).unwrap();
/// // `<descriptor>:<lock file>`
/// assert!(seen.trim().ends_with(&format!(":{}", lock.path().display())));
/// # Ok::<(), reproject::Error>(())
/// ```
pub const INHERITED_LOCKS_VAR: &str = "REPROJECT_RS_INHERITED_LOCKS";

/// An advisory lock on an output path, held until dropped (or until the process dies).
///
/// ```
/// use reproject::io::OutputLock;
/// let out = std::env::temp_dir().join(format!("lock_doc_{}.fits", std::process::id()));
/// let lock = OutputLock::acquire(&out)?;
/// assert!(lock.is_exclusive());
/// // A second owner is refused at once (here from the same process; the same holds for
/// // another process).
/// let busy = OutputLock::acquire(&out).unwrap_err();
/// assert!(matches!(busy, reproject::Error::OutputBusy(_)));
/// drop(lock);
/// assert!(!OutputLock::lock_path(&out).exists());
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    lock_path: PathBuf,
    exclusive: bool,
}

impl OutputLock {
    /// The lock file of `output`: `<output>.lock`.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// assert_eq!(
    ///     OutputLock::lock_path("a/b.fits".as_ref()),
    ///     std::path::Path::new("a/b.fits.lock")
    /// );
    /// ```
    pub fn lock_path(output: &Path) -> PathBuf {
        let mut name = output.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        output.with_file_name(name)
    }

    /// Takes the lock of `output` exclusively, or fails at once with
    /// [`Error::OutputBusy`] naming the run (or the workers) that hold it.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// let out = std::env::temp_dir().join(format!("acquire_doc_{}.fits", std::process::id()));
    /// let lock = OutputLock::acquire(&out)?;
    /// assert!(OutputLock::lock_path(&out).exists());
    /// assert!(matches!(OutputLock::acquire(&out), Err(reproject::Error::OutputBusy(_))));
    /// drop(lock); // let go: the next run may own it
    /// assert!(OutputLock::acquire(&out)?.is_exclusive());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn acquire(output: &Path) -> Result<OutputLock> {
        Self::take(output, true)
    }

    /// Takes the lock of `output` shared with other shared holders (external worker
    /// processes of one job), or fails at once with [`Error::OutputBusy`] if a run owns it.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// let out = std::env::temp_dir().join(format!("shared_doc_{}.fits", std::process::id()));
    /// let a = OutputLock::acquire_shared(&out)?;
    /// let b = OutputLock::acquire_shared(&out)?;
    /// assert!(OutputLock::acquire(&out).is_err());
    /// # drop((a, b));
    /// # let _ = std::fs::remove_file(OutputLock::lock_path(&out));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn acquire_shared(output: &Path) -> Result<OutputLock> {
        Self::take(output, false)
    }

    /// The lock of `output` that this process inherited from the run that started it (see
    /// [`share_with`](Self::share_with)), if any. Fails if the inherited descriptor is not
    /// the lock file of `output`.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// // This process was started by no run: it inherited no lock.
    /// let out = std::env::temp_dir().join(format!("inherited_doc_{}.fits", std::process::id()));
    /// assert!(OutputLock::inherited(&out)?.is_none());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn inherited(output: &Path) -> Result<Option<OutputLock>> {
        let lock_path = Self::lock_path(output);
        let Ok(list) = std::env::var(INHERITED_LOCKS_VAR) else {
            return Ok(None);
        };
        for entry in list.split(';').filter(|e| !e.is_empty()) {
            let Some((fd, path)) = entry.split_once(':') else {
                continue;
            };
            if Path::new(path) != lock_path {
                continue;
            }
            let fd: i32 = fd.parse().map_err(|_| {
                Error::InvalidArgument(format!("{INHERITED_LOCKS_VAR}: bad descriptor '{fd}'"))
            })?;
            return inherit(fd, lock_path).map(Some);
        }
        Ok(None)
    }

    /// Whether this is an owner's (exclusive) lock.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// let out = std::env::temp_dir().join(format!("exclusive_doc_{}.fits", std::process::id()));
    /// assert!(!OutputLock::acquire_shared(&out)?.is_exclusive());
    /// assert!(OutputLock::acquire(&out)?.is_exclusive());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// The lock file.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// let out = std::env::temp_dir().join(format!("path_doc_{}.fits", std::process::id()));
    /// let lock = OutputLock::acquire(&out)?;
    /// assert_eq!(lock.path(), OutputLock::lock_path(&out));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.lock_path
    }

    /// Makes the child processes of `command` share these locks: they inherit the open lock
    /// files (so the locks stay held while any of them lives), learn them through
    /// [`INHERITED_LOCKS_VAR`], and are killed if this process dies (Linux: parent-death
    /// signal), so that no worker outlives its owner.
    ///
    /// ```
    /// use reproject::io::OutputLock;
    /// let out = std::env::temp_dir().join(format!("share_doc_{}.fits", std::process::id()));
    /// let lock = OutputLock::acquire(&out)?;
    /// // The child holds the lock file open, at the descriptor the variable names.
    /// let mut child = std::process::Command::new("sh");
    /// child.args(["-c", "readlink /proc/$$/fd/${REPROJECT_RS_INHERITED_LOCKS%%:*}"]);
    /// OutputLock::share_with(&[&lock], &mut child);
    /// let held = String::from_utf8(child.output()?.stdout).unwrap();
    /// assert_eq!(std::path::Path::new(held.trim()), lock.path());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    #[cfg(unix)]
    pub fn share_with(locks: &[&OutputLock], command: &mut std::process::Command) {
        use std::os::unix::io::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fds: Vec<i32> = locks.iter().map(|l| l.file.as_raw_fd()).collect();
        let list: Vec<String> = locks
            .iter()
            .zip(&fds)
            .map(|(l, fd)| format!("{fd}:{}", l.lock_path.display()))
            .collect();
        command.env(INHERITED_LOCKS_VAR, list.join(";"));
        // SAFETY: getpid is async-signal-safe and called before the fork.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions (fcntl, prctl, getppid) on plain integers.
        unsafe {
            command.pre_exec(move || {
                keep_open_across_exec(&fds)?;
                die_with_parent(parent)
            });
        }
    }

    fn take(output: &Path, exclusive: bool) -> Result<OutputLock> {
        let lock_path = Self::lock_path(output);
        let io = |e: std::io::Error| Error::Io(format!("{}: {e}", lock_path.display()));
        // The owner may remove the file between our open and our lock: try again then.
        for _ in 0..100 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock_path)
                .map_err(io)?;
            let taken = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match taken {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::OutputBusy(busy_message(output, &mut file)))
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
            if !same_file(&file, &lock_path) {
                continue;
            }
            if exclusive {
                // Say who owns the output, for the message a second run prints.
                let owner = format!(
                    "process {} ({})",
                    std::process::id(),
                    command_line().unwrap_or_default()
                );
                file.set_len(0).map_err(io)?;
                file.write_all(owner.as_bytes()).map_err(io)?;
            }
            return Ok(OutputLock {
                file,
                lock_path,
                exclusive,
            });
        }
        Err(Error::OutputBusy(format!(
            "{}: its lock file {} keeps being replaced by other runs",
            output.display(),
            lock_path.display()
        )))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Only an owner removes the file, and only while it still holds it: a shared holder
        // cannot know whether others hold it too.
        if self.exclusive && same_file(&self.file, &self.lock_path) {
            let _ = std::fs::remove_file(&self.lock_path);
        }
        // Closing the file releases the lock (for this process; inheriting workers keep it).
    }
}

/// Whether `path` still names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// Why `output` is busy: the owner named in the lock file, or its external workers.
fn busy_message(output: &Path, file: &mut File) -> String {
    // Shared holders do not conflict with a shared request: if one succeeds, the holders
    // are external workers.
    let workers = file.try_lock_shared().is_ok();
    if workers {
        let _ = file.unlock();
        return format!(
            "{} is being written by worker processes of its job (reproject-rs worker); wait \
             for them to end",
            output.display()
        );
    }
    let mut owner = String::new();
    let _ = file.rewind();
    let _ = file.take(4096).read_to_string(&mut owner);
    let owner = owner.trim();
    let owner = if owner.is_empty() {
        "another run".to_string()
    } else {
        format!("another run, {owner},")
    };
    format!(
        "{} is being written by {owner} which holds its lock {}",
        output.display(),
        OutputLock::lock_path(output).display()
    )
}

/// This process's command line, for the owner's note in the lock file.
fn command_line() -> Option<String> {
    let words: Vec<String> = std::env::args().collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The lock file open at descriptor `fd`, checked to be `lock_path`.
#[cfg(unix)]
fn inherit(fd: i32, lock_path: PathBuf) -> Result<OutputLock> {
    use std::os::unix::io::FromRawFd;
    // SAFETY: F_GETFD only reads the descriptor's flags; it fails on a closed descriptor.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(Error::InvalidArgument(format!(
            "{INHERITED_LOCKS_VAR}: descriptor {fd} is not open in this process"
        )));
    }
    // SAFETY: the descriptor is open and was handed to this process for its lock; from here
    // on it is owned by the returned value alone.
    let file = unsafe { File::from_raw_fd(fd) };
    if !same_file(&file, &lock_path) {
        std::mem::forget(file); // not ours to close
        return Err(Error::InvalidArgument(format!(
            "{INHERITED_LOCKS_VAR}: descriptor {fd} is not the lock file {}",
            lock_path.display()
        )));
    }
    Ok(OutputLock {
        file,
        lock_path,
        exclusive: false,
    })
}

#[cfg(not(unix))]
fn inherit(_fd: i32, lock_path: PathBuf) -> Result<OutputLock> {
    Err(Error::Unsupported(format!(
        "inherited locks ({}) need a Unix system",
        lock_path.display()
    )))
}

/// Lets the descriptors `fds` stay open in the program a child process executes (they are
/// opened close-on-exec). Async-signal-safe (`fcntl` only): for `pre_exec` closures.
#[cfg(unix)]
pub(crate) fn keep_open_across_exec(fds: &[i32]) -> std::io::Result<()> {
    for &fd in fds {
        // SAFETY: plain system calls on integers; they fail on a descriptor that is not open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// In a freshly forked child: asks for SIGKILL when the parent dies, and exits if it has
/// died already (between the fork and this call).
#[cfg(target_os = "linux")]
fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
    Ok(())
}

#[cfg(all(unix, not(target_os = "linux")))]
fn die_with_parent(_parent: libc::pid_t) -> std::io::Result<()> {
    Ok(())
}
