//! Quad-cube projections (TSC CSC QSC), prj.c.

super::not_yet_written! {
    Tsc = "TSC",
    Csc = "CSC",
    Qsc = "QSC",
}
