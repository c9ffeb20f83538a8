//! Kernels compiled into the on-disk cache by a process of their own.
//!
//! A job whose specialised kernel variant is not compiled yet runs the general kernel and has
//! the variant compiled in the background, for the jobs after it. Compiled on a thread of the
//! job's process, the variant dies with that process: a process that exits first must wait
//! for it (a compile thread inside NVRTC while the libraries tear down corrupts the heap), and
//! on the H100 machine one variant kept a finished CLI job waiting 60 s at its exit, then was
//! abandoned unfinished, so that every later run compiled it again
//! (docs/measurements/h100-2026-11-27-session21). A [`CompileHelper`] is a program that
//! compiles one build into the cache and exits: started as a process of its own, it outlives
//! the job's process, which neither waits for it at exit nor loses its work.
//!
//! The command-line tool sets itself (`reproject-rs warmup --arch ARCH --variant DEFINES`),
//! the Python package its interpreter (`python -m reproject_rs._compile_helper ...`). A
//! program without a helper compiles on its own threads, as before.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::variant::KernelDefines;

/// A program that compiles one build of the kernels into the on-disk cache: run with its
/// arguments followed by `--arch ARCH` and, for a specialised build, `--variant DEFINES` (the
/// build's NVRTC defines, space separated), it must compile that build into the cache
/// ([`super::warm_build`]) and exit with status 0. It runs with this process's environment
/// plus [`CompileHelper::env`]'s, with no descriptor of this process (its standard streams
/// read from and write to `/dev/null`), in a process group of its own (a Ctrl-C that ends a
/// job does not end the compilation it left).
///
/// ```
/// use reproject::gpu::CompileHelper;
/// let helper = CompileHelper::new("/usr/local/bin/reproject-rs").arg("warmup");
/// assert_eq!(helper.command_line("sm_90", None), ["warmup", "--arch", "sm_90"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileHelper {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl CompileHelper {
    /// The helper `program`, with no arguments of its own yet.
    ///
    /// ```
    /// let helper = reproject::gpu::CompileHelper::new("python3");
    /// assert_eq!(helper.command_line("sm_80", None), ["--arch", "sm_80"]);
    /// ```
    pub fn new(program: impl Into<PathBuf>) -> CompileHelper {
        CompileHelper {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// This helper with `arg` added to its own arguments.
    ///
    /// ```
    /// let helper = reproject::gpu::CompileHelper::new("python3").arg("-m").arg("mypkg.compile");
    /// assert_eq!(helper.command_line("sm_90", None), ["-m", "mypkg.compile", "--arch", "sm_90"]);
    /// ```
    pub fn arg(mut self, arg: impl Into<OsString>) -> CompileHelper {
        self.args.push(arg.into());
        self
    }

    /// This helper with the environment variable `key` set to `value` for it.
    ///
    /// ```
    /// let helper = reproject::gpu::CompileHelper::new("python3").env("PYTHONPATH", "/opt/pkgs");
    /// # let _ = helper;
    /// ```
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> CompileHelper {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The arguments the helper runs with to compile the build `variant` names (`None`: the
    /// general kernels) for `arch`.
    ///
    /// ```
    /// let helper = reproject::gpu::CompileHelper::new("reproject-rs").arg("warmup");
    /// assert_eq!(
    ///     helper.command_line("sm_90", Some("RP_V_HOMOGRAPHY RP_V_ORDER=1")),
    ///     ["warmup", "--arch", "sm_90", "--variant", "RP_V_HOMOGRAPHY RP_V_ORDER=1"]
    /// );
    /// ```
    pub fn command_line(&self, arch: &str, variant: Option<&str>) -> Vec<OsString> {
        let mut line = self.args.clone();
        line.extend(["--arch".into(), arch.into()]);
        if let Some(defines) = variant {
            line.extend(["--variant".into(), defines.into()]);
        }
        line
    }

    /// Runs the helper for `variant` (the general kernels when it has no defines) on `arch`
    /// and waits for it: `Ok` when it exited with status 0, else what went wrong.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))] // (only the GPU runtime compiles)
    pub(crate) fn compile(&self, arch: &str, variant: &KernelDefines) -> Result<(), String> {
        use std::os::unix::process::CommandExt;
        let defines = (!variant.is_general()).then(|| variant.to_string());
        let mut command = Command::new(&self.program);
        command
            .args(self.command_line(arch, defines.as_deref()))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: runs in the child between fork and exec and makes one system call on
        // integers (async-signal-safe). Every descriptor but the standard streams is closed
        // at the exec: the helper outlives this process and must not hold its files (one
        // that C code opened without close-on-exec, e.g. CFITSIO's inputs). A kernel without
        // CLOSE_RANGE_CLOEXEC (before Linux 5.11) leaves them, as exec would.
        #[cfg(target_os = "linux")]
        unsafe {
            command.pre_exec(|| {
                const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
                libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
                Ok(())
            });
        }
        let status = command
            .status()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{} ended with {status}", self.program.display()))
        }
    }
}

/// The helper this process compiles kernels with, if any.
static HELPER: Mutex<Option<CompileHelper>> = Mutex::new(None);

/// Makes `helper` compile the kernels this process would compile in the background (kernel
/// variants for the jobs after the first, the general kernels that `Auto` prepares while a
/// job runs on the CPU), each in a process of its own; `None` compiles them on this process's
/// threads again. A helper that fails leaves the build to this process, as without one.
///
/// ```
/// use reproject::gpu::{set_compile_helper, CompileHelper};
/// let me = std::env::current_exe()?;
/// set_compile_helper(Some(CompileHelper::new(me).arg("warmup")));
/// set_compile_helper(None);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn set_compile_helper(helper: Option<CompileHelper>) {
    *HELPER.lock().unwrap_or_else(|p| p.into_inner()) = helper;
}

/// The helper set by [`set_compile_helper`].
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn compile_helper() -> Option<CompileHelper> {
    HELPER.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rp-helper-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The helper gets its arguments, then the build's, and its environment, but none of
    /// this process's descriptors (here one open across exec); its exit status says whether
    /// it compiled.
    #[test]
    fn the_helper_runs_with_the_builds_arguments_and_its_environment() {
        use std::os::unix::io::AsRawFd;
        let dir = scratch("args");
        let said = dir.join("said");
        let held = std::fs::File::create(dir.join("held")).unwrap();
        let fd = held.as_raw_fd();
        // SAFETY: fcntl on a descriptor `held` keeps open.
        unsafe { assert_eq!(libc::fcntl(fd, libc::F_SETFD, 0), 0) };
        let helper = CompileHelper::new("/bin/sh")
            .arg("-c")
            .arg(
                "if [ -e /proc/self/fd/$RP_HELPER_FD ]; then held=held; else held=closed; fi; \
                 printf '%s\\n' \"$@\" \"$RP_HELPER_TEST\" $held > \"$RP_HELPER_OUT\"",
            )
            .arg("sh")
            .env("RP_HELPER_TEST", "from the helper's environment")
            .env("RP_HELPER_FD", fd.to_string())
            .env("RP_HELPER_OUT", &said);
        let variant = KernelDefines::new(["RP_V_HOMOGRAPHY", "RP_V_ORDER=1"]).unwrap();
        helper.compile("sm_90", &variant).unwrap();
        assert_eq!(
            std::fs::read_to_string(&said).unwrap(),
            "--arch\nsm_90\n--variant\nRP_V_HOMOGRAPHY RP_V_ORDER=1\nfrom the helper's environment\nclosed\n"
        );
        helper.compile("sm_80", &KernelDefines::general()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&said).unwrap(),
            "--arch\nsm_80\nfrom the helper's environment\nclosed\n"
        );
        drop(held);

        let failing = CompileHelper::new("/bin/sh").arg("-c").arg("exit 3");
        let e = failing.compile("sm_90", &variant).unwrap_err();
        assert!(e.contains("/bin/sh ended with exit status: 3"), "{e}");
        let missing = CompileHelper::new(dir.join("no-such-program"));
        let e = missing.compile("sm_90", &variant).unwrap_err();
        assert!(e.starts_with("cannot start "), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_helper_is_set_and_unset() {
        let helper = CompileHelper::new("reproject-rs").arg("warmup");
        set_compile_helper(Some(helper.clone()));
        assert_eq!(compile_helper(), Some(helper));
        set_compile_helper(None);
        assert_eq!(compile_helper(), None);
    }
}
