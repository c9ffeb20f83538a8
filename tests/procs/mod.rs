//! Shared helpers for tests that watch processes through `/proc` (Linux).
#![allow(dead_code)]

/// The fields of `/proc/<pid>/stat` after the command name: state, parent, ... (the name may
/// hold spaces and parentheses, so it is cut at the last ')').
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Every process id in `/proc`.
fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The processes whose parent is `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&p| {
            stat_fields(p).and_then(|f| f.get(1).and_then(|pp| pp.parse::<u32>().ok())) == Some(pid)
        })
        .collect()
}

/// Whether process `pid` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s != "Z"))
}

/// Live processes whose command line mentions `needle`.
pub fn live_processes_mentioning(needle: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            alive(p) && String::from_utf8_lossy(&cmdline).contains(needle)
        })
        .collect()
}
